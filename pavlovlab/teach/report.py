"""Report sentences: measured results as the rounded lines a notebook prints and checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def verdict_sentence(row: Mapping[str, Any], digits: int = 1) -> str:
    """One rounded line per verdict row, identical on every run of a seeded experiment."""
    e, r = row["effect"], row["relative"]
    word = {True: "agrees", False: "DISAGREES", None: "inconclusive"}[row["holds"]]
    rel = "" if row["design"] == "acquisition" else f" = {100 * r.mean:+.0f} % [{100 * r.lo:+.0f}, {100 * r.hi:+.0f}]"
    return (f"{row['attention']:>7} | {row['design']:<22} | predicted {row['predicted']:<9} | observed "
            f"{row['observed']:<12} | {e.mean:+.{digits}f} [{e.lo:+.{digits}f}, {e.hi:+.{digits}f}]{rel} | {word}")


__all__ = ["verdict_sentence"]
