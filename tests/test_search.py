"""The exact top-m search: on random candidate sets it returns exactly the m best candidates
by brute-force teacher-forced scoring, with the same scores, whatever the token budget per
call, with or without the prompt cache; and nothing but candidates."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphraft.inference.decoding.radix import build_radix, count_tokens
from graphraft.inference.decoding.search import SearchStats, top_m, top_m_many
from graphraft.inference.decoding.tree_attention import Branch, PromptCache, TreeCache
from graphraft.inference.decoding.trie import CandidateIndex, candidate_sequences
from graphraft.inference.generation import ConstrainedGenerator
from graphraft.inference.prompts import l1_messages, prompt_ids
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, render


@pytest.fixture(scope="module")
def tiny(graphraft_home):
    from graphraft.models import tiny_random_model

    return tiny_random_model(graphraft_home, seed=3)


def teacher_forced(model, prompt: list[int], sequences) -> dict[tuple[int, ...], float]:
    """Each sequence's summed log-probability after the prompt, one plain forward each."""
    scores = {}
    with torch.no_grad():
        for sequence in sequences:
            ids = torch.tensor([prompt + list(sequence)])
            logprobs = torch.log_softmax(model(input_ids=ids).logits[0, len(prompt) - 1 : -1].float(), dim=-1)
            scores[tuple(sequence)] = logprobs[torch.arange(len(sequence)), torch.tensor(sequence)].sum().item()
    return scores


# --------------------------------------------------------------------------- the radix tree
def walk(node, prefix=()):
    prefix = prefix + node.edge
    if node.sequence is not None:
        yield prefix, node
    for child in node.children:
        yield from walk(child, prefix)


def test_radix_tree_holds_every_sequence_once_and_compresses_single_child_runs():
    sequences = sorted({(1, 2, 3, 9), (1, 2, 4, 9), (1, 2, 4, 8, 9), (1, 5, 9), (7, 9), (7,)})
    root = build_radix(sequences)
    found = {prefix: node for prefix, node in walk(root)}
    assert sorted(found) == sequences
    assert all(node.sequence == prefix for prefix, node in found.items())
    # (1, 2) is one edge: no candidate ends after 1 and every one continues with 2
    first = {child.edge for child in root.children}
    assert first == {(1,), (7,)}
    one = next(c for c in root.children if c.edge == (1,))
    assert {c.edge for c in one.children} == {(2,), (5, 9)}
    # (7,) is a candidate and a prefix of (7, 9): a node that ends one and continues
    seven = next(c for c in root.children if c.edge == (7,))
    assert seven.sequence == (7,) and [c.edge for c in seven.children] == [(9,)]
    # no node other than a candidate's end has a single child
    stack = [root]
    while stack:
        node = stack.pop()
        assert len(node.children) != 1 or node.sequence is not None or node is root
        stack.extend(node.children)
    assert count_tokens(root) == len({p[:i] for p in sequences for i in range(1, len(p) + 1)})


# --------------------------------------------------------------------------- tree attention
def test_branches_fed_together_score_as_if_teacher_forced_alone(tiny):
    model, tokenizer = tiny
    prompt = prompt_ids(tokenizer, l1_messages("which films did [X] star in?"))
    a, b, c = (5, 6, 7, 8), (5, 6, 9), (11, 12)
    tree = TreeCache(model, prompt)
    # call 1: the prompt, the shared (5, 6), then (7, 8) below it in the same call, and c
    forward, prompt_row, fed = tree.feed([Branch((), (5, 6)), Branch((), (7, 8), after=0), Branch((), c)])
    got_a = forward.logprobs([prompt_row, fed[0].rows[0], fed[0].rows[1], fed[1].rows[0]], a).sum().item()
    got_c = forward.logprobs([prompt_row, fed[2].rows[0]], c).sum().item()
    # call 2: (9,) below the shared (5, 6) fed in call 1, reached by its slots
    second, _, fed2 = tree.feed([Branch(fed[0].path, (9, 4))])
    first_two = forward.logprobs([prompt_row, fed[0].rows[0]], (5, 6)).sum().item()
    got_b = (
        first_two
        + forward.logprobs([fed[0].rows[1]], (9,)).sum().item()
        + second.logprobs([fed2[0].rows[0]], (4,)).sum().item()
    )
    expected = teacher_forced(model, prompt, [a, c, b + (4,)])
    assert got_a == pytest.approx(expected[a], abs=1e-4)
    assert got_c == pytest.approx(expected[c], abs=1e-4)
    assert got_b == pytest.approx(expected[b + (4,)], abs=1e-4)


def test_prompt_cache_reuses_the_shared_beginning_and_changes_no_score(tiny):
    model, tokenizer = tiny
    cache = PromptCache()
    first = prompt_ids(tokenizer, l1_messages("who directed [A]?"))
    second = prompt_ids(tokenizer, l1_messages("who wrote [B]?"))
    TreeCache(model, first, cache).feed([])
    reused = TreeCache(model, second, cache)
    shared = next(i for i, (x, y) in enumerate(zip(first, second)) if x != y)
    assert reused.reused == shared > 8  # the system prompt and the user turn's opening
    forward, row, _ = reused.feed([])
    fresh_forward, fresh_row, _ = TreeCache(model, second).feed([])
    assert torch.allclose(forward.logprob[row], fresh_forward.logprob[fresh_row], atol=1e-5)


# --------------------------------------------------------------------------- exact top-m
names = st.text(alphabet=st.sampled_from(list("abcXYZ \"'\\`éøß東-:")), min_size=1, max_size=10)
candidate_sets = st.one_of(
    st.lists(names, min_size=1, max_size=1),  # a single candidate
    st.lists(names, min_size=2, max_size=14, unique=True),  # quotes, backslashes, non-ASCII letters
    # long shared prefixes that differ only at the very end
    st.lists(st.text(alphabet="ab", min_size=1, max_size=4), min_size=2, max_size=10, unique=True).map(
        lambda tails: ["the same long name of a person " * 2 + tail for tail in tails]
    ),
)


def rendered(name: str, hops: int, rel: str = "R") -> str:
    steps = tuple(Step(f"{rel}{i % 2}", i % 2 == 0, ("Movie",)) for i in range(hops))
    return render(Pattern(AnchorRef(f"p:{name}", ("Person",)), steps, hops))


@given(
    candidate_sets,
    st.integers(min_value=1, max_value=5),
    st.sampled_from([1, 7, 48, 100_000]),
    st.integers(min_value=0, max_value=10_000),
)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_search_returns_exactly_the_brute_force_top_m(tiny, names_, m, budget, seed):
    model, tokenizer = tiny
    candidates = [rendered(name, 1 + i % 3) for i, name in enumerate(names_)]
    index = CandidateIndex(tokenizer, candidates)
    prompt = prompt_ids(tokenizer, l1_messages(f"question {seed}?"))
    expected = sorted(teacher_forced(model, prompt, index.trie.sequences).items(), key=lambda kv: -kv[1])
    stats = SearchStats()
    found = top_m(model, prompt, index.radix(), m, budget, stats=stats)
    assert len(found) == min(m, len(candidates))
    for result, (sequence, score) in zip(found, expected):
        # float32 sums over up to ~100 tokens, in another order than teacher forcing's
        tolerance = 1e-4 + 1e-6 * abs(score)
        assert result.score == pytest.approx(score, abs=tolerance)
        # the same sequence, or one whose score ties with it
        assert result.sequence == sequence or abs(expected_score(expected, result.sequence) - score) < tolerance
    assert all(index.query_for(r.sequence) in candidates for r in found)
    assert len({r.sequence for r in found}) == len(found)
    assert stats.calls >= 1


@given(
    st.lists(st.tuples(candidate_sets, st.text(alphabet="abc [?]東", max_size=12)), min_size=1, max_size=4),
    st.integers(min_value=1, max_value=3),
    st.sampled_from([1, 7, 48]),
)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_searches_fed_together_return_what_each_returns_alone(tiny, questions, m, budget):
    """A forest: several questions' trees below their prompts in one cache, every call feeding
    the branches of all searches still running. Each result is the brute-force top-m of its
    own question; prompts that share only the system prompt, or that are equal, both work."""
    model, tokenizer = tiny
    prompts, indexes = [], []
    for names_, question in questions:
        candidates = [rendered(name, 1 + i % 3) for i, name in enumerate(names_)]
        indexes.append(CandidateIndex(tokenizer, candidates))
        prompts.append(prompt_ids(tokenizer, l1_messages(question)))
    stats = SearchStats()
    together = top_m_many(model, prompts, [index.radix() for index in indexes], m, budget, PromptCache(), stats)
    assert len(together) == len(questions)
    for prompt, index, found in zip(prompts, indexes, together):
        expected = sorted(teacher_forced(model, prompt, index.trie.sequences).items(), key=lambda kv: -kv[1])
        assert len(found) == min(m, len(expected))
        for result, (sequence, score) in zip(found, expected):
            tolerance = 1e-4 + 1e-6 * abs(score)  # as in the single-question test
            assert result.score == pytest.approx(score, abs=tolerance)
            assert result.sequence == sequence or abs(expected_score(expected, result.sequence) - score) < tolerance
    # fewer calls than one search at a time would make
    alone = SearchStats()
    for prompt, index in zip(prompts, indexes):
        top_m(model, prompt, index.radix(), m, budget, stats=alone)
    assert stats.calls <= alone.calls and (len(questions) == 1 or stats.calls < alone.calls)


def test_generate_many_matches_generate_and_skips_questions_without_candidates(tiny):
    model, tokenizer = tiny
    lists = [
        [rendered(name, hops) for name in names_ for hops in (1, 2)]
        for names_ in (("Ann", "Bo"), (), ("東京", "Cy Ö"), ("Ann",))
    ]
    questions = ["who is [Ann]?", "nothing here", "where is [東京]?", "who is [Ann]?"]
    generator = ConstrainedGenerator(model, tokenizer)
    many = generator.generate_many(questions, lists, num_beams=2, group=3)
    assert many[1] == []
    for question, candidates, got in zip(questions, lists, many):
        alone = ConstrainedGenerator(model, tokenizer).generate(question, candidates, num_beams=2)
        assert [q.cypher for q in got] == [q.cypher for q in alone]
        assert [q.score for q in got] == pytest.approx([q.score for q in alone], abs=1e-4)


def expected_score(expected, sequence) -> float:
    return dict(expected)[sequence]


def test_generator_agrees_with_beam_search_where_beam_search_is_exact(tiny):
    """With as many beams as candidates, beam search keeps every candidate alive, so it is
    exact: both methods must return the same queries with the same scores."""
    model, tokenizer = tiny
    candidates = [rendered(name, hops) for name in ("Ann", "Bo", "Cy") for hops in (1, 2)]
    exact = ConstrainedGenerator(model, tokenizer).generate("who?", candidates, num_beams=6)
    beam = ConstrainedGenerator(model, tokenizer, method="beam").generate("who?", candidates, num_beams=6)
    assert [q.cypher for q in exact] == [q.cypher for q in beam]
    # beam search sums in float32 (an ulp of 6e-5 at -500), the search in float64
    assert [q.score for q in exact] == pytest.approx([q.score for q in beam], rel=1e-6, abs=1e-4)


def test_search_with_a_reused_prompt_cache_gives_the_same_results(tiny):
    model, tokenizer = tiny
    candidates = [rendered(name, hops) for name in ("Ann Lee", "Bo", "東京") for hops in (1, 2, 3)]
    cached = ConstrainedGenerator(model, tokenizer)
    for question in ("who is [Ann Lee]?", "what did [Bo] do?", "where is [東京]?"):
        fresh = ConstrainedGenerator(model, tokenizer).generate(question, candidates, num_beams=3)
        again = cached.generate(question, candidates, num_beams=3)
        assert [q.cypher for q in again] == [q.cypher for q in fresh]
        assert [q.score for q in again] == pytest.approx([q.score for q in fresh], abs=1e-5)
    assert cached.prompts.cache is not None


def test_a_candidate_that_is_one_token_and_eos_is_found(tiny):
    model, tokenizer = tiny
    sequences = sorted(set(candidate_sequences(tokenizer, ["x", "y z", "MATCH"])))
    prompt = prompt_ids(tokenizer, l1_messages("q?"))
    expected = sorted(teacher_forced(model, prompt, sequences).items(), key=lambda kv: -kv[1])
    found = top_m(model, prompt, build_radix(sequences), 3)
    assert [r.sequence for r in found] == [s for s, _ in expected]
