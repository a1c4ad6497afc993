#pragma once
/* cudalab: NVRTC declares printf/malloc/memcpy for device code itself. */
