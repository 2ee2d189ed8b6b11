"""User-facing errors: the CLI prints their message on one line and exits non-zero."""

import os
import re


class RagraphsError(Exception):
    """Base class of errors caused by input or configuration, not by a bug.

    Each subclass is also the builtin error it is a kind of (``ValueError`` for bad settings
    and input, ``RuntimeError`` for a failing model or store): a LangGraph server shows the
    message of builtin errors to Studio and SDK clients and replaces any other one with "An
    internal error occurred"."""

    exit_code = 2


class ConfigError(RagraphsError, ValueError):
    """Bad settings: unknown method, missing model, bad spec string."""


class InputError(RagraphsError, ValueError):
    """Bad user input: empty question, missing path, unreadable data file."""


class LLMError(RagraphsError, RuntimeError):
    """The language model could not be reached or failed."""

    exit_code = 3


class StoreError(RagraphsError, RuntimeError):
    """The vector store could not be opened or written."""

    exit_code = 4


def file_in_the_way(path: str) -> str | None:
    """``path`` itself, or the nearest of its parent folders that exists (as the user spelt it),
    where that is no folder (a file): no folder can be made there. None where the path is free
    or a folder."""
    here = path.rstrip(os.sep) or path
    while not os.path.lexists(here):
        parent = os.path.dirname(here)
        if not parent or parent == here:
            return None
        here = parent
    return None if os.path.isdir(here) else here


def check_folder_place(path: str, option: str = "--store", error: type[RagraphsError] | None = None) -> None:
    """An :class:`InputError` (or ``error``) where ``path``, or a parent of it, is a file: one
    line ``--store FILE is a file; give a folder``, in place of the "no store" advice or a raw
    ``FileExistsError`` / ``NotADirectoryError`` from making the folder (until 2026-11-30)."""
    if option == "--store" and "://" in path:  # a Chroma server's address: a folder named http:/... was made
        raise (error or InputError)(f"--store {path} is an address; give a Chroma server as --store-url {path}")
    found = file_in_the_way(path)
    if found is not None:
        what = "a link to nothing (a broken symbolic link)" if os.path.islink(found) and not os.path.exists(found) \
            else "a file"
        raise (error or InputError)(f"{option} {path} is {what}; give a folder" if found == path.rstrip(os.sep) else
                                    f"{option} {path}: {found} is {what}, not a folder; give a folder")


def check_writable_folder(path: str, option: str = "--out") -> None:
    """An :class:`InputError` unless ``path`` is a writable folder, made here if it is missing:
    checked before a long run, so its results are not lost at the end."""
    check_folder_place(path, option)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise InputError(f"{option} {path}: cannot make the folder ({e.strerror or e})") from e
    if not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"{option} {path}: the folder is not writable")


def check_writable_file(path: str, option: str = "--out") -> None:
    """An :class:`InputError` unless the file ``path`` can be written (its folder exists and is
    writable, and it is not a folder itself)."""
    if os.path.isdir(path):
        raise InputError(f"{option} {path} is a folder; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{option} {path}: cannot write there ({folder} is not a writable folder)")


# environment variables whose values are secrets (API keys, tokens, passwords)
_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.I)


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with the values of secret environment variables (``OPENAI_API_KEY``,
    ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``...) and the ``secrets`` given (a model's own key,
    set in Python and in no variable: shown until 2026-12-03) replaced by ``***``.

    Used on every error message ragraphs prints or records: a server may echo the key it
    was sent (``Incorrect API key provided: sk-...``) and the message must not carry it on.
    """
    values = [v for name, v in os.environ.items() if _SECRET_NAME.search(name)] + [s for s in secrets if s]
    for value in values:
        if len(value) >= 6 and value in text:
            text = text.replace(value, "***")
    return text


def without_userinfo(url: str) -> str:
    """``url`` without its ``user:password@`` part, as an error message, a file or a summary
    shows it (an LLM endpoint, an ``eval --server`` address)."""
    return re.sub(r"//[^/@]*@", "//", url)
