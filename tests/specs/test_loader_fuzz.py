"""Fuzzing the spec loader: whatever the input, only SpecError escapes.

Thousands of generated inputs in CI; ``ARCADEBENCH_LONG=1`` runs ten times more.
"""

from __future__ import annotations

import yaml
from fuzzing import fuzz
from hypothesis import given
from hypothesis import strategies as st
from testdata import DATA

from arcadebench.errors import SpecError
from arcadebench.specs import parse_spec

FUZZ = fuzz(1_500)

SPECS = DATA / "specs"
VALID = {
    name: yaml.safe_load((SPECS / f"minimal_{name}.yaml").read_text())
    for name in ("atari", "retro")
}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=10), inner, max_size=5)
    ),
    max_leaves=20,
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


def _replace(node, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {k: (_replace(v, rest, value) if k == head else v) for k, v in node.items()}
    return [(_replace(v, rest, value) if i == head else v) for i, v in enumerate(node)]


def _dump(data) -> str:
    """YAML text of ``data`` (libyaml's emitter where PyYAML has it: the fuzzing's main cost)."""
    return yaml.dump(data, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True)


def _load(text: str) -> None:
    try:
        parse_spec(text, "fuzz.yaml")
    except SpecError as error:
        assert "\n" not in str(error) and str(error).startswith("fuzz.yaml")


@FUZZ
@given(st.text(max_size=400))
def test_arbitrary_text_raises_only_spec_error(text):
    _load(text)


@FUZZ
@given(st.sampled_from(sorted(VALID)), st.data(), values)
def test_valid_spec_with_one_value_replaced_raises_only_spec_error(kind, data, value):
    base = VALID[kind]
    path = data.draw(st.sampled_from(list(_paths(base))))
    _load(_dump(_replace(base, path, value)))


@FUZZ
@given(st.sampled_from(sorted(VALID)), st.data())
def test_valid_spec_with_one_key_removed_raises_only_spec_error(kind, data):
    base = VALID[kind]
    path = data.draw(st.sampled_from([p for p in _paths(base) if p and isinstance(p[-1], str)]))
    parent = base
    for key in path[:-1]:
        parent = parent[key]
    without = {k: v for k, v in parent.items() if k != path[-1]}
    _load(_dump(_replace(base, path[:-1], without)))


@FUZZ
@given(st.sampled_from(sorted(VALID)), st.integers(0, 10_000), st.text(min_size=1, max_size=5))
def test_valid_spec_text_with_bytes_inserted_raises_only_spec_error(kind, position, junk):
    text = (SPECS / f"minimal_{kind}.yaml").read_text()
    position %= len(text)
    _load(text[:position] + junk + text[position:])


def test_a_key_ending_in_a_newline_is_quoted_in_the_one_line_error():
    """What the fuzzing found: ``re.match`` with ``$`` accepts a final newline."""
    for kind in sorted(VALID):
        _load(_dump(_replace(VALID[kind], ("action_sets",), {"0\n": None})))
