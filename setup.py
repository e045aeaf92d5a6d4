"""Build hook: the course travels in the wheel as package data, without a second copy in git.

``build_py`` copies ``course/`` (the full notebooks and the instructor guide) and ``student/`` (the learner
copies) into the built package as ``pavlovlab/_course/course`` and ``pavlovlab/_course/student``, where
``pavlovlab start`` and ``pavlovlab student`` find them from any folder. An editable install skips the copy:
there the commands find the clone's own ``course/``. Everything else is declared in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
COURSE_FOLDERS = ("course", "student")


class BuildPyWithCourse(build_py):
    """``build_py``, then the course folders copied into ``<build_lib>/pavlovlab/_course/``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "pavlovlab" / "_course"
        for folder in COURSE_FOLDERS:
            src = ROOT / folder
            for path in sorted(src.rglob("*")):
                rel = path.relative_to(src)
                if path.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
                    dest = target / folder / rel
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, dest)


setup(cmdclass={"build_py": BuildPyWithCourse})
