/* cudalab: an empty <windows.h>, given (by windows_header.py) only to a unit that stopped at the missing header.
 * A Visual Studio program often includes it and calls nothing of the Win32 API; one that does call it (Sleep,
 * QueryPerformanceCounter) still stops, and is then told of the missing header as nvcc tells it. */
#pragma once
