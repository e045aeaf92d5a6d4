"""The language the teaching side speaks: English, Chinese (中文) or French (français).

Every sentence the package says to a learner (a checker's verdict, each hint tier, a widget's label, the lines of
``pavlovlab doctor`` and ``pavlovlab start``) is written in English in the source, marked for translation, and looked
up in the catalogue of the language in use when it is shown:

- ``_("{n} pairs stored").format(n=n)`` where the sentence is made, at run time (never an f-string inside ``_``:
  the catalogue holds the sentence with its named fields, which a translation may move);
- ``N_("...")`` where it is written before any language can be chosen (a checker's hints and title, declared when
  its module is imported): ``N_`` only marks the text for the catalogue, and what shows it calls ``_(text)``.

The catalogues, one per source module, are ``locales/<locale>/LC_MESSAGES/<module>.po`` (``tools/translations.py
update`` extracts the marked sentences with Babel and merges them, as it does the notebooks' text); ``tools/
translations.py build`` compiles each language's into ``pavlovlab/locale/<locale>/LC_MESSAGES/pavlovlab.mo``, which
the wheel carries, and Python's :mod:`gettext` reads at run time. A sentence without a translation (new, or changed
since it was translated) is said in English.

The language: a notebook's set-up cell names its edition's (``ex.start(language="fr")`` in ``student/fr/``;
``ex.start()`` is English); the command line takes ``--lang`` or, without it, :data:`ENVIRONMENT` and then the
system's locale (:func:`from_environment`).
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["EDITIONS", "ENVIRONMENT", "LOCALE_DIR", "N_", "_", "current", "edition", "from_environment", "use"]

EDITIONS = {"en": "en", "zh": "zh_CN", "fr": "fr"}
"""Edition (``--lang``, the folder ``student/<edition>/``) → gettext locale of its catalogues."""
ENVIRONMENT = "PAVLOVLAB_LANGUAGE"
"""An environment variable that names the edition before the system's locale does (``zh``, ``fr_FR.UTF-8``, …)."""
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
"""Where the compiled catalogues lie: ``<LOCALE_DIR>/<locale>/LC_MESSAGES/pavlovlab.mo``."""
DOMAIN = "pavlovlab"

_edition = "en"
_translation: gettext.NullTranslations = gettext.NullTranslations()


def edition(language: str) -> str:
    """The edition a language name stands for: ``"zh"`` for ``zh``, ``zh_CN``, ``zh-CN`` or ``zh_CN.UTF-8``,
    ``"fr"`` for ``fr`` or ``fr_FR``, ``"en"`` for ``en``, ``C`` or ``POSIX``.

    Raises:
        ValueError: for a language the course has no edition in, naming the three it has.
    """
    code = language.replace("-", "_").split(".")[0].split("@")[0].split("_")[0].lower()
    if code in ("c", "posix"):
        return "en"
    if code not in EDITIONS:
        raise ValueError(f"language: expected one of {', '.join(EDITIONS)} (English, 中文, français), got "
                         f"{language!r}")
    return code


def from_environment(environ: Mapping[str, str] | None = None) -> str:
    """The edition the environment asks for: :data:`ENVIRONMENT` first, then the locale as gettext reads it
    (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, the first one set); English where none names an edition."""
    env = os.environ if environ is None else environ
    for key in (ENVIRONMENT, "LC_ALL", "LC_MESSAGES", "LANG"):
        if env.get(key):
            try:
                return edition(env[key])
            except ValueError:
                return "en"
    return "en"


def use(language: str | None = None) -> str:
    """Speak ``language`` from now on (``None``: :func:`from_environment`); returns the edition chosen.

    Raises:
        ValueError: for a language the course has no edition in.
    """
    global _edition, _translation
    _edition = from_environment() if language is None else edition(language)
    _translation = gettext.translation(DOMAIN, LOCALE_DIR, languages=[EDITIONS[_edition]], fallback=True)
    return _edition


def current() -> str:
    """The edition in use: ``"en"``, ``"zh"`` or ``"fr"``."""
    return _edition


def _(message: str) -> str:
    """``message`` in the language in use (itself where the catalogue has no translation of it)."""
    return _translation.gettext(message) if message else message


def N_(message: str) -> str:
    """``message`` itself: marks a sentence written before a language is chosen; what shows it calls ``_``."""
    return message
