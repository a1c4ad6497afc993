/* cudalab: <Windows.h> as Visual Studio programs often spell it (Windows finds either case): windows.h */
#pragma once
#include "windows.h"
