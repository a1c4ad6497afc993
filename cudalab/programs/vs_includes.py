"""Include folders that a Visual Studio project beside the source names (``<IncludePath>``, ``<Include>``).

A course written in Visual Studio keeps its shared headers in a folder the project lists
(``<IncludePath>../../Common;$(IncludePath)</IncludePath>``, CUDA's ``<CudaCompile><Include>``, C++'s
``<AdditionalIncludeDirectories>``), and its programs say only ``#include "common.h"``. ``nvcc x.cu`` reads
no project, so on Linux (a GPU's machine too) the build stops with "common.h: No such file or directory".
When a header is missing and a project in the includer's folder lists a folder that holds it, cudalab
compiles the unit again with the project's existing folders on the include path, and says which ``-I``
options build it with nvcc. Folders outside the checkout (``C:/dev/tclap/include``) and MSBuild's macros
other than ``$(ProjectDir)``/``$(MSBuildProjectDirectory)`` are passed over: they name nothing here.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from .include_case import MISSING

# the project elements that hold include folders, as MSBuild and CUDA's build customization name them
_TAGS = ("IncludePath", "AdditionalIncludeDirectories", "Include")
_PROJECT_DIR = re.compile(r"\$\((ProjectDir|MSBuildProjectDirectory|MSBuildThisFileDirectory)\)[\\/]?")


def _listed(project: Path) -> list:
    """The folders ``project`` lists for its includes, as existing paths, in its order."""
    try:
        root = ET.parse(project).getroot()
    except (ET.ParseError, OSError):
        return []
    found = []
    for e in root.iter():
        tag = e.tag.rsplit("}", 1)[-1]
        # <CudaCompile Include="x.cu"> names a file (an attribute); <Include> as an element names folders
        if tag not in _TAGS or not (e.text or "").strip():
            continue
        for entry in e.text.split(";"):
            entry = _PROJECT_DIR.sub("", entry.strip()).replace("\\", "/")
            if not entry or "$(" in entry or "%(" in entry or re.match(r"[A-Za-z]:/|/", entry):
                continue
            folder = (project.parent / entry).resolve()
            if folder.is_dir() and folder not in found:
                found.append(folder)
    return found


def folders_for(log: str, cwd: Path) -> tuple | None:
    """(project, folders) for the first header ``log`` says is missing that a folder listed by a Visual
    Studio project in its includer's folder holds; ``folders`` are all the project's existing include
    folders (a header found there may include the next), or None."""
    for m in MISSING.finditer(log):
        name, includer = m.group("name"), (cwd / m.group("includer")).resolve()
        for project in sorted(includer.parent.glob("*.vcxproj")):
            folders = _listed(project)
            if any((f / name).is_file() for f in folders):
                return project, folders
    return None


def options(folders: list) -> list:
    """nvcc's ``-I`` options for ``folders``, after the ones the build already has."""
    return [f"-I{f}" for f in folders]


def note(project: Path, folders: list, cwd: Path) -> str:
    """What the student reads when cudalab took the include folders of ``project``."""
    spelled = " ".join(f"-I{os.path.relpath(f, cwd)}" for f in folders)
    return (f"cudalab: note: the program's headers are in the include folders its Visual Studio project "
            f"{project.name} lists, which nvcc does not read (on a GPU's Linux machine it stops at the first "
            f"#include). cudalab added them; build it with nvcc {spelled} ... elsewhere.\n")
