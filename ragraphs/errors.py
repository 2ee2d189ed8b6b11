"""User-facing errors: the CLI prints their message on one line and exits non-zero."""


class RagraphsError(Exception):
    """Base class of errors caused by input or configuration, not by a bug."""

    exit_code = 2


class ConfigError(RagraphsError):
    """Bad settings: unknown method, missing model, bad spec string."""


class InputError(RagraphsError):
    """Bad user input: empty question, missing path, unreadable data file."""


class LLMError(RagraphsError):
    """The language model could not be reached or failed."""

    exit_code = 3


class StoreError(RagraphsError):
    """The vector store could not be opened or written."""

    exit_code = 4
