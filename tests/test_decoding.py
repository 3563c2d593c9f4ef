"""Constrained decoding: whatever the model, every returned sequence is a candidate."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphraft.inference.decoding.processor import TrieLogitsProcessor
from graphraft.inference.decoding.trie import CandidateIndex, TokenTrie, candidate_sequences
from graphraft.inference.generation import ConstrainedGenerator
from graphraft.inference.prompts import l1_messages, prompt_ids
from graphraft.synthesis.patterns import AnchorRef, Pattern, Step, render


@pytest.fixture(scope="module")
def tiny(graphraft_home):
    from graphraft.models import tiny_random_model

    return tiny_random_model(graphraft_home, seed=0)


def test_trie_next_tokens_and_membership():
    trie = TokenTrie([(1, 2, 3, 9), (1, 2, 4, 9), (1, 5, 9), (7, 9)])
    assert trie.next_tokens(()) == [1, 7]
    assert trie.next_tokens((1,)) == [2, 5]
    assert trie.next_tokens((1, 2)) == [3, 4]
    assert trie.next_tokens((1, 2, 3, 9)) == []  # complete
    assert trie.next_tokens((8,)) == []  # off the trie
    assert (1, 5, 9) in trie and (1, 5) not in trie
    assert trie.max_length == 4


names = st.text(alphabet=st.sampled_from(list("abcXYZ \"'\\`éøß東-:")), min_size=1, max_size=12)


def rendered(name: str, rel: str = "R", hops: int = 1) -> str:
    steps = tuple(Step(rel, i % 2 == 0, ("Movie",)) for i in range(hops))
    return render(Pattern(AnchorRef(f"p:{name}", ("Person",)), steps, hops))


@given(st.lists(names, min_size=1, max_size=40, unique=True))
@settings(max_examples=40, deadline=None)
def test_piecewise_tokenisation_equals_whole_tokenisation(tiny, candidates):
    _, tokenizer = tiny
    queries = [rendered(name) for name in candidates] * 2  # past the size where pieces are used
    expected = [
        tuple(ids) + (tokenizer.eos_token_id,) for ids in tokenizer(queries, add_special_tokens=False)["input_ids"]
    ]
    assert candidate_sequences(tokenizer, queries) == expected


candidate_sets = st.one_of(
    st.lists(names, min_size=1, max_size=1),  # a single candidate
    st.lists(names, min_size=2, max_size=12, unique=True),  # names with quotes, non-ASCII letters
    # long shared prefixes that differ only at the very end
    st.lists(st.text(alphabet="ab", min_size=1, max_size=4), min_size=2, max_size=8, unique=True).map(
        lambda tails: ["the same long name of a person " * 2 + tail for tail in tails]
    ),
)


@given(candidate_sets, st.integers(min_value=0, max_value=10_000), st.sampled_from([1, 3]))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_generated_query_is_a_candidate(tiny, names_, seed, beams):
    model, tokenizer = tiny
    torch.manual_seed(seed)
    with torch.no_grad():  # a different random model for each example
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.5)
    candidates = [rendered(name, hops=1 + i % 3) for i, name in enumerate(names_)]
    results = ConstrainedGenerator(model, tokenizer).generate("question?", candidates, num_beams=beams)
    assert results, "constrained decoding always yields at least one query"
    assert all(r.cypher in candidates for r in results)
    assert len(results) <= min(beams, len(candidates))
    assert len({r.cypher for r in results}) == len(results)


def test_processor_is_fail_closed_and_stateless():
    trie = TokenTrie([(5, 6, 2), (5, 7, 2)])
    processor = TrieLogitsProcessor(trie, prompt_length=1, eos_token_id=2, num_beams=2)
    scores = torch.zeros(2, 10)
    # row 0 is on the trie, row 1 has wandered off it: only eos for that row
    out = processor(torch.tensor([[0, 5], [0, 9]]), scores)
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == [6, 7]
    assert torch.isfinite(out[1]).nonzero().flatten().tolist() == [2]
    # the same prefixes in swapped rows (beam reordering) give swapped masks
    swapped = processor(torch.tensor([[0, 9], [0, 5]]), scores)
    assert torch.equal(swapped[0], out[1]) and torch.equal(swapped[1], out[0])


def test_processor_uses_one_trie_per_batch_item():
    first, second = TokenTrie([(5, 2)]), TokenTrie([(6, 2)])
    processor = TrieLogitsProcessor([first, second], prompt_length=0, eos_token_id=2, num_beams=2)
    out = processor(torch.zeros(4, 0, dtype=torch.long), torch.zeros(4, 10))
    allowed = [torch.isfinite(row).nonzero().flatten().tolist() for row in out]
    assert allowed == [[5], [5], [6], [6]]


def test_candidate_index_maps_generated_tokens_back_by_lookup(tiny):
    _, tokenizer = tiny
    queries = [rendered("Tom Hanks"), rendered("Tom Hanks", hops=2)]
    index = CandidateIndex(tokenizer, queries)
    ids = tokenizer(queries[1], add_special_tokens=False)["input_ids"]
    eos = tokenizer.eos_token_id
    assert index.query_for(ids + [eos, eos, eos], pad_token_id=eos) == queries[1]
    assert index.query_for(ids) is None  # no eos: not a finished candidate
    assert index.query_for(ids[:-1] + [eos]) is None


def test_no_candidate_means_no_query(tiny):
    model, tokenizer = tiny
    assert ConstrainedGenerator(model, tokenizer).generate("q", []) == []


def test_beam_search_does_not_stop_before_a_longer_better_query_finishes(graphraft_home):
    """Shorter candidates finish first; the search must go on while a running query can still
    score higher (with early_stopping=True it stopped once it had num_beams finished ones, and
    the best, longest query was never returned)."""
    from graphraft.models import tiny_random_model

    model, tokenizer = tiny_random_model(graphraft_home, seed=0)
    best = render(
        Pattern(
            AnchorRef("p:x", ("Person",)),
            (
                Step("R", True, ("Movie",)),
                Step("R", False, ("Movie",)),
                Step("HAS_A_VERY_LONG_RELATIONSHIP_NAME", True, ("Movie",)),
            ),
            3,
        )
    )
    others = [
        rendered("x", hops=1),
        render(Pattern(AnchorRef("p:x", ("Person",)), tuple(Step("S", i % 2 == 0, ("Movie",)) for i in range(3)), 3)),
        rendered("x", hops=2),
    ]
    # teach the model the long query: every one of its tokens becomes likely
    prompt = prompt_ids(tokenizer, l1_messages("question?"))
    ids = torch.tensor([prompt + list(candidate_sequences(tokenizer, [best])[0])])
    labels = ids.clone()
    labels[0, : len(prompt)] = -100
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    model.train()
    for _ in range(120):
        loss = model(input_ids=ids, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    lengths = [len(s) for s in candidate_sequences(tokenizer, others + [best])]
    assert max(lengths[0], lengths[2]) < min(lengths[1], lengths[3])  # the 1- and 2-hop ones finish first
    with torch.no_grad():
        log_probs = torch.log_softmax(model(ids).logits[0, len(prompt) - 1 : -1], dim=-1)
    exact = log_probs[torch.arange(ids.shape[1] - len(prompt)), ids[0, len(prompt) :]].sum().item()
    results = ConstrainedGenerator(model, tokenizer).generate("question?", others + [best], num_beams=3)
    assert results[0].cypher == best
    assert results[0].score == pytest.approx(exact, abs=1e-3)  # sequence scores are summed log-probs
