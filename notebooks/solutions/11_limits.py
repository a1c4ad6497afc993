# 11-limits: read from the Programming Guide's "Technical specifications per compute capability".
answers = {
    "max_threads_per_block": 1024,   # every compute capability
    "max_warps_per_sm_86": 48,       # 8.6: 1536 threads per SM
    "max_blocks_per_sm_75": 16,      # 7.5
    "shared_per_sm_kb_80": 164,      # 8.0: up to 164 KB per SM
}
