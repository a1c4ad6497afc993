#pragma once
/* cudalab: NVRTC declares assert() for device code itself. */
