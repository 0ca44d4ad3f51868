"""The configuration reference (docs/reference/configuration.md) is generated from the config
dataclasses by ``tools/gen_config_docs.py``: it is current, it lists every option of every
client, and a docstring whose stated default contradicts the code stops the generator."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from aiokafka import AIOKafkaConsumer as AiokafkaConsumer
from aiokafka import AIOKafkaProducer as AiokafkaProducer
from aiokafka.admin import AIOKafkaAdminClient as AiokafkaAdminClient
from ferrokafka.config import (
    AdminConfig,
    ConnectionConfig,
    ConsumerConfig,
    ProducerConfig,
    ShareConsumerConfig,
)

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = (ConnectionConfig, ConsumerConfig, ProducerConfig, AdminConfig, ShareConsumerConfig)


def _load_generator() -> ModuleType:
    path = ROOT / "tools" / "gen_config_docs.py"
    spec = importlib.util.spec_from_file_location("gen_config_docs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_config_docs"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


def test_the_page_is_current() -> None:
    assert gen.main(["--check"]) == 0, "run .venv/bin/python tools/gen_config_docs.py"
    assert (ROOT / gen.PAGE).read_text(encoding="utf-8") == gen.render()


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.__name__)
def test_every_option_is_in_the_page(config: type) -> None:
    page = gen.render()
    for f in dataclasses.fields(config):
        if not f.init:
            continue  # derived from the options, not one
        assert f"| `{f.name}` |" in page, f"{config.__name__}.{f.name} missing from the page"


def test_every_row_has_a_meaning_and_a_java_name() -> None:
    for config in CONFIGS:
        for option in gen.options(config):
            assert option.meaning, option.name
            assert option.java, option.name
            assert option.default, option.name


@pytest.mark.parametrize(
    ("aiokafka_class", "config"),
    [
        (AiokafkaConsumer, ConsumerConfig),
        (AiokafkaProducer, ProducerConfig),
        (AiokafkaAdminClient, AdminConfig),
    ],
)
def test_the_aiokafka_column_matches_aiokafka(aiokafka_class: type, config: type) -> None:
    theirs = set(inspect.signature(aiokafka_class.__init__).parameters)
    ours = {f.name for f in dataclasses.fields(config) if f.init}
    assert ours - theirs <= gen.NOT_IN_AIOKAFKA
    assert not (gen.NOT_IN_AIOKAFKA & ours & theirs)


def test_a_stale_page_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "configuration.md"
    page.write_text(gen.render() + "edited by hand\n", encoding="utf-8")
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr(gen, "PAGE", Path("configuration.md"))
    assert gen.main(["--check"]) == 1
    assert page.read_text(encoding="utf-8").endswith("edited by hand\n")


def _config_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> type:
    source = tmp_path / "bad_config.py"
    source.write_text(textwrap.dedent(body), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "bad_config", raising=False)
    module = importlib.import_module("bad_config")
    cls: type = module.BadConfig
    return cls


def test_a_docstring_contradicting_the_default_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cls = _config_module(
        tmp_path,
        monkeypatch,
        '''
        from dataclasses import dataclass

        @dataclass
        class BadConfig:
            linger_ms: int = 5
            """Milliseconds to wait. Default 0. Java: ``linger.ms``."""
        ''',
    )
    with pytest.raises(gen.DocError, match=r"BadConfig\.linger_ms: the code's default is 5"):
        gen.options(cls)


def test_an_option_without_a_docstring_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cls = _config_module(
        tmp_path,
        monkeypatch,
        """
        from dataclasses import dataclass

        @dataclass
        class BadConfig:
            linger_ms: int = 5
        """,
    )
    with pytest.raises(gen.DocError, match=r"BadConfig\.linger_ms .* has no docstring"):
        gen.options(cls)
