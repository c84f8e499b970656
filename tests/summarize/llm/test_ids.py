"""Which provider a spec names: Bedrock and Gemini ids are recognized without a prefix, and nothing an OpenAI or
Ollama user writes is mistaken for one (properties over generated ids, both ways)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chainsum.summarize.llm import SUMMARIZER_PROVIDERS, bare_provider, split_spec
from chainsum.summarize.llm._ids import BEDROCK_REGION_PREFIXES, BEDROCK_VENDORS

_name = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}(\.[a-z0-9-]{1,8})?", fullmatch=True)
_version = st.one_of(st.just(""), st.from_regex(r":[0-9]{1,2}(:[0-9a-z]{1,4})?", fullmatch=True))


@st.composite
def bedrock_ids(draw: st.DrawFn) -> str:
    region = draw(st.one_of(st.just(""), st.sampled_from(BEDROCK_REGION_PREFIXES).map(lambda r: r + ".")))
    return f"{region}{draw(st.sampled_from(BEDROCK_VENDORS))}.{draw(_name)}{draw(_version)}"


_OLLAMA_VERSIONED = r"(llama|qwen|mistral|gemma|phi|deepseek-r)[0-9]{1,2}(\.[0-9])?(:[0-9a-z.]{1,8})?"


@st.composite
def openai_names(draw: st.DrawFn) -> str:
    """Names an OpenAI-compatible endpoint serves: OpenAI's own, fine-tunes, and Ollama's tags."""
    base = draw(
        st.one_of(
            st.from_regex(r"gpt-[0-9](\.[0-9])?(o)?(-(mini|nano|turbo|[0-9]{4}-[0-9]{2}-[0-9]{2}))?", fullmatch=True),
            st.from_regex(r"o[1-9](-(mini|pro))?", fullmatch=True),
            st.from_regex(r"(chatgpt|text-embedding|davinci)-[a-z0-9-]{1,12}", fullmatch=True),
            # Ollama-style: a name without a dot after a vendor, a tag after the colon
            st.from_regex(_OLLAMA_VERSIONED, fullmatch=True)
            | st.from_regex(r"(mistral|llama|qwen)(-[a-z]{1,8})?(:[0-9a-z.]{1,8})?", fullmatch=True),
        )
    )
    if draw(st.booleans()):
        org = draw(st.from_regex(r"[a-z0-9-]{1,10}", fullmatch=True))
        return f"ft:{base}:{org}::{draw(st.from_regex(r'[A-Za-z0-9]{4,8}', fullmatch=True))}"
    return base


@given(bedrock_ids())
def test_bedrock_ids_go_to_bedrock(model: str) -> None:
    assert bare_provider(model) == "bedrock"
    assert split_spec(model) == ("bedrock", model)
    assert split_spec(f"bedrock:{model}") == ("bedrock", model)


@given(openai_names())
def test_openai_and_ollama_names_are_never_taken_for_bedrock_or_gemini(model: str) -> None:
    assert bare_provider(model) is None
    assert split_spec(f"openai:{model}") == ("openai", model)


@given(st.from_regex(r"gemini-[0-9a-z][0-9a-z.-]{0,24}", fullmatch=True))
def test_gemini_names_go_to_gemini(model: str) -> None:
    assert bare_provider(model) == "gemini"
    assert split_spec(model) == ("gemini", model)


@given(
    st.sampled_from(SUMMARIZER_PROVIDERS),
    st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=1, max_size=30),
)
def test_an_explicit_prefix_always_wins_and_the_model_keeps_its_colons(provider: str, model: str) -> None:
    assert split_spec(f"{provider.upper()}:{model}") == (provider, model.strip())


@pytest.mark.parametrize(
    "model",
    [
        "us.amazon.nova-micro-v1:0",
        "amazon.titan-text-express-v1",
        "anthropic.claude-3-5-sonnet-20240620-v1:0",
        "eu.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "apac.amazon.nova-pro-v1:0",
        "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "meta.llama3-1-70b-instruct-v1:0",
        "mistral.mistral-large-2402-v1:0",
        "cohere.command-r-plus-v1:0",
        "ai21.jamba-1-5-large-v1:0",
        "deepseek.r1-v1:0",
        "qwen.qwen3-32b-v1:0",
        "writer.palmyra-x5-v1:0",
        "openai.gpt-oss-120b-1:0",
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.nova-micro-v1:0",
        "arn:aws-us-gov:bedrock:us-gov-west-1::foundation-model/amazon.titan-text-lite-v1",
    ],
)
def test_real_bedrock_ids(model: str) -> None:
    assert bare_provider(model) == "bedrock"


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4.1-mini",
        "o3",
        "ft:gpt-4o-mini:acme::x1",
        "llama3:8b",
        "qwen2.5:7b",
        "mistral:7b",
        "Anthropic.Claude",  # Bedrock ids are lower case
        "amazon",
        "us.nova-micro",  # a region but no vendor
        "my-local-model",
        "models/gemini-2.5-flash",  # the REST resource name, not a model id
        "gemini",
        "extractive",
        "",
    ],
)
def test_names_that_are_neither(model: str) -> None:
    assert bare_provider(model) is None


def test_split_spec_reads_prefixes_case_insensitively_and_leaves_the_rest() -> None:
    assert split_spec(" Anthropic:claude-x ") == ("anthropic", "claude-x")
    assert split_spec("openai:") == ("openai", "")
    assert split_spec("mistral:large") is None
    assert split_spec("gpt-4o") is None
