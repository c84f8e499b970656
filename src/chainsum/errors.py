"""The exceptions chainsum raises, all under one base so callers can catch one thing.

    ChainsumError
    ├── FormatError          input that no wire format can read, or that breaks the named format
    │   └── AmbiguousFormatError   auto-detection matched several formats equally well
    ├── ChainError           a message list that breaks one of the chain rules (strict build)
    ├── ToolCallError        an edit that names a tool call the chain does not hold
    ├── TemplateError        a malformed tool-call id template
    ├── SummarizerError      a summarizer failed (transport, empty or malformed output); `retryable` says which
    ├── UnknownProviderError a provider name with no rule table
    ├── MissingDependencyError an optional extra is not installed (says the exact pip command)
    ├── ConfigError          (chainsum.manager) a configuration value out of range (names the variable)
    ├── UnknownModelError    (chainsum.manager) a model with no known context window (lists close names)
    └── StoreError           (chainsum.store) the archive, records or state cannot do what was asked
        ├── ArchiveIntegrityError  an archived message no longer matches its SHA-256 (names the message id)
        ├── ArchiveConflictError   same id archived with different content, or a record that disagrees
        ├── UnknownSummaryError    no summary record with that id
        ├── StoreConnectionError   the database connection was lost for good, or a COMMIT's fate is unknown
        └── SchemaVersionError     the database was written by a newer chainsum

Every error says *what* went wrong and *where* (message index, field path, rule), because the CLI turns it
into the one line a user sees.
"""

from __future__ import annotations

__all__ = [
    "AmbiguousFormatError",
    "ChainError",
    "ChainsumError",
    "FormatError",
    "MissingDependencyError",
    "SummarizerError",
    "TemplateError",
    "ToolCallError",
    "UnknownProviderError",
]


class ChainsumError(Exception):
    """Base of every error chainsum raises on purpose."""


class FormatError(ChainsumError, ValueError):
    """Input that cannot be read as the wire format asked for (or any format, when detecting).

    `where` is a path into the input such as ``messages[3].content[1].type``; it is empty when the
    problem is the document as a whole.
    """

    def __init__(self, detail: str, *, where: str = "", format: str | None = None) -> None:
        self.detail = detail
        self.where = where
        self.format = format
        prefix = f"{format}: " if format else ""
        location = f"at {where}: " if where else ""
        super().__init__(f"{prefix}{location}{detail}")


class AmbiguousFormatError(FormatError):
    """Auto-detection could not decide; `candidates` lists the formats that all matched."""

    def __init__(self, candidates: list[str]) -> None:
        self.candidates = candidates
        super().__init__("cannot tell the format apart between " + ", ".join(candidates) + "; pass --format / format=")


class ChainError(ChainsumError, ValueError):
    """A message list that breaks a chain rule. `rule` is the spec's rule number and name."""

    def __init__(self, rule: str, index: int, detail: str) -> None:
        self.rule = rule
        self.index = index
        self.detail = detail
        super().__init__(f"message {index}: {rule}: {detail}")


class ToolCallError(ChainsumError, LookupError):
    """An edit named a tool call id that no assistant message in the chain holds."""


class TemplateError(ChainsumError, ValueError):
    """A tool-call id template that cannot be parsed (see `chainsum.chain.normalize_tool_call_ids`)."""


class MissingDependencyError(ChainsumError, ImportError):
    """An optional extra is needed; the message carries the exact install command."""

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(f'{package} is not installed; install it with: pip install "chainsum[{extra}]"')


class UnknownProviderError(ChainsumError, ValueError):
    """`validate`/`repair` was asked about a provider that has no rule table; `known` lists the ones that do."""

    def __init__(self, provider: str, known: tuple[str, ...]) -> None:
        self.provider = provider
        self.known = known
        super().__init__(f"unknown provider {provider!r}; known providers: {', '.join(known)}")


class SummarizerError(ChainsumError, RuntimeError):
    """A summarizer call failed. `kind` is one of ``transport`` (network, timeout, 5xx), ``rate_limit`` (429),
    ``empty`` (no text came back), ``invalid`` (output that does not validate), ``refused``; `retryable` is
    True for transport and rate-limit failures, where trying again can help. `retry_after` is the server's hint
    in seconds, when it gave one."""

    def __init__(self, detail: str, *, kind: str = "transport", retry_after: float | None = None) -> None:
        self.detail = detail
        self.kind = kind
        self.retry_after = retry_after
        super().__init__(f"summarizer failed ({kind}): {detail}")

    @property
    def retryable(self) -> bool:
        return self.kind in ("transport", "rate_limit")
