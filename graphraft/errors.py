"""One exception hierarchy for everything GraphRAFT raises on purpose.

The CLI turns any ``GraphRAFTError`` into a one-line message and a non-zero exit;
anything else is a bug and keeps its traceback. A library message names a setting by its
field name (``max_answers``), which is also its YAML key and, dashed, its flag
(``--max-answers``); only the command line's own messages name flags.
"""


class GraphRAFTError(Exception):
    """Base class: a problem the user can act on, described in one line."""

    exit_code = 1


class ConfigurationError(GraphRAFTError):
    """Settings that cannot work (bad URI, missing password, unknown embedder)."""


class DatabaseUnavailableError(GraphRAFTError):
    """The graph database cannot be reached or started."""

    exit_code = 3


class PortInUseError(DatabaseUnavailableError):
    """The configured port for the embedded server is already taken."""


class GraphNotFoundError(GraphRAFTError):
    """The named graph does not exist (nothing loaded under that name)."""


class GraphDataLostError(GraphRAFTError):
    """A graph that was loaded is gone or smaller than loaded (a crash lost its data)."""

    exit_code = 3


class QueryTimeoutError(GraphRAFTError):
    """A query ran past its time limit."""

    exit_code = 4


class ReadOnlyViolationError(GraphRAFTError):
    """A write was attempted on the read-only path."""


class QueryError(GraphRAFTError):
    """The database rejected a query."""


class DeadlineExceededError(QueryTimeoutError):
    """A whole operation (one `ask`) ran past its overall time limit."""


class InputFileError(GraphRAFTError):
    """A missing, unreadable or malformed input file; the message names file[:line]."""

    exit_code = 2


class EmbeddingError(GraphRAFTError):
    """The embedding model could not be loaded or called."""


class InvalidInputError(GraphRAFTError):
    """A user-supplied value that cannot work (an empty question, a bad option value)."""

    exit_code = 2


class BusyError(GraphRAFTError):
    """The service has as many questions waiting as it takes; come back later (HTTP 503)."""


class UnauthorizedError(GraphRAFTError):
    """A request to the service without the bearer token it requires (HTTP 401)."""
