"""Model names -> pydantic-ai models; pydantic-ai alone decides what a provider needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_kedi.errors import ModelError, ModelUnavailable
from pytest_kedi.runtime.model.names import TEST_MODEL, normalize_model_name
from pytest_kedi.text import one_line

if TYPE_CHECKING:  # pragma: no cover
    from pydantic_ai.models import Model

__all__ = ["own_client_without_sdk_retries", "resolve_model", "without_sdk_retries"]


def without_sdk_retries(model: Model) -> Model:
    """Turn off the provider SDK's own retries: the OpenAI, Anthropic and Groq SDKs retry a
    429, a 5xx or a lost connection twice by default, unseen by ``--kedi-retries``, the
    usage counts and ``--kedi-max-requests`` (whose cap would then let three requests
    through per call). Only pytest-kedi's retry policy retries."""
    client = getattr(model, "client", None)
    if isinstance(getattr(client, "max_retries", None), int):
        client.max_retries = 0  # type: ignore[union-attr]
    return model


def own_client_without_sdk_retries(model: Model) -> Model:
    """A model object given to pytest-kedi (the ``pytest_kedi_model`` hook's, `load`'s
    ``model=``) with `without_sdk_retries` for each model in it whose provider built its
    own client (given neither an SDK client nor an HTTP client): ``--kedi-max-requests``
    then caps the requests it sends too. A client the user built and gave is left as it
    is (README: build it with ``max_retries=0``)."""
    from pydantic_ai.models.wrapper import WrapperModel

    inner = model
    while isinstance(inner, WrapperModel):
        inner = inner.wrapped
    members = getattr(inner, "models", None)  # a `FallbackModel`
    if isinstance(members, (list, tuple)):
        for member in members:
            own_client_without_sdk_retries(member)
        return model
    try:
        provider = getattr(inner, "provider", None)
    except Exception:  # a model without one may raise instead
        return model
    if getattr(provider, "_own_http_client", None) is not None:
        without_sdk_retries(inner)
    return model


def resolve_model(name: str, *, answered_from_cassette: bool = False) -> Model:
    """Build the pydantic-ai model for ``name``.

    Called at a program's first model call, never at load time, so a missing package,
    key or base URL surfaces there. Whatever pydantic-ai's own construction raises
    (for instance a missing ``OPENAI_API_KEY``, which it does not need when
    ``OPENAI_BASE_URL`` points at a keyless server) becomes one line naming the model
    and pydantic-ai's error class and message, otherwise unchanged.

    ``answered_from_cassette`` (``--kedi-record-mode replay`` or ``strict``): a replayed
    answer needs no key, so a provider that refuses to be built without one is built with
    a placeholder key; the model then raises that one-line error at its first live
    request (a replay miss), and never in strict mode, which makes none.
    """
    normalized = normalize_model_name(name)
    if normalized == TEST_MODEL:
        from pytest_kedi.runtime.model.offline import TestModel

        return TestModel()
    from pydantic_ai.models import infer_model

    try:
        return without_sdk_retries(infer_model(normalized))
    except Exception as error:
        unavailable = ModelUnavailable(
            f"model '{normalized}' is not available: {type(error).__name__}: {one_line(error)}"
        )
        unavailable.__cause__ = error
        keyless = _keyless(normalized, unavailable) if answered_from_cassette else None
        if keyless is None:
            raise unavailable from error
        return keyless


#: The key a provider gets when its model only replays answers (never sent anywhere).
PLACEHOLDER_KEY = "replay-only-no-key"


def _keyless(name: str, unavailable: ModelError) -> Model | None:
    """``name``'s model built with `PLACEHOLDER_KEY`, raising ``unavailable`` at any live
    request; None when the provider cannot be built that way either."""
    from pydantic_ai.models import infer_model
    from pydantic_ai.providers import Provider, infer_provider_class

    def provider(provider_name: str) -> Provider[object]:
        return infer_provider_class(provider_name)(api_key=PLACEHOLDER_KEY)  # type: ignore[call-arg]

    try:
        model = without_sdk_retries(infer_model(name, provider_factory=provider))
    except Exception:
        return None
    from pytest_kedi.runtime.model.keyless import KeylessModel

    return KeylessModel(model, unavailable)
