"""Provider validity rules and repair.

``validate(messages, provider)`` lists every way a history breaks a provider's rules as `Problem`s (OpenAI,
Anthropic, Gemini, Bedrock; the rules are a data table, `PROFILES`, each citing its source).
``repair(messages, provider)`` makes it valid with ordered pure passes (`PASSES`), reporting each change as a
`RepairAction`.
"""

from ._checks import validate
from ._content_passes import EMPTY_ERROR_RESULT
from ._problem import Problem, RepairAction, Repaired, UnknownProviderError
from ._providers import PROFILES, PROVIDERS, RULES, ProviderProfile, get_profile
from ._repair import PASSES, repair
from ._tool_passes import CONTINUED_TEXT

__all__ = [
    "CONTINUED_TEXT",
    "EMPTY_ERROR_RESULT",
    "PASSES",
    "PROFILES",
    "PROVIDERS",
    "RULES",
    "Problem",
    "ProviderProfile",
    "RepairAction",
    "Repaired",
    "UnknownProviderError",
    "get_profile",
    "repair",
    "validate",
]
