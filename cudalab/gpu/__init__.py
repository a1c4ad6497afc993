"""Real-GPU backend: the same PTX the emulator runs, run on an NVIDIA GPU through cuda.core (see backend.py)."""
