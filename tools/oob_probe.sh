#!/bin/sh
# Runs tools/oob_probe.cu's cases on a GPU, one process each (see that file). Usage: sh tools/oob_probe.sh
set -e
cd "$(dirname "$0")"
nvcc -O2 -arch=sm_90 -o /tmp/oob_probe oob_probe.cu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
p() { printf '%s -> ' "$*"; timeout 20 /tmp/oob_probe "$@" 2>&1 | tr '\n' ' '; echo; }
for s in 1000 4096 100000 1048576 2097152 3145728; do p gap $s; done
for o in 1000 1020 1024 1532 1536 2044 4092 65536 1048576 2097148 4194304 67108864; do p g 1000 $o; done
for o in -4 -512 -4096; do p g 1000 $o; done
p g 1000 1000 w; p g 1000 1048576 w
for o in 2097152 2101248 4194300 4194304; do p g 2097152 $o; done
for o in 67108864 67174400 69206016; do p g 67108864 $o; done
for o in 100 124 128 252 256 1020 1024 1124 1152 2048 4096; do p s 100 $o; done
for o in 1296 1364 1404 1408 1532 2048 2320 2432 4096; do p s 1296 $o; done
for o in 4096 4220 4224 5116 5120 8192; do p s 4096 $o; done
for o in 0 124 128 1024; do p d 0 $o; done
for o in 100 124 128 1024 1152; do p d 100 $o; done
for o in 1296 1404 1408 2432; do p d 1296 $o; done
for o in 32 64 256 1020 1024 2048 4096 65536 1048576 16777216; do p l $o; done
for o in 64 1024 65532 65536 1048576; do p c $o; done
