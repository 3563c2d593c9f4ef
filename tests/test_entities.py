"""L0 extractors and anchor resolution."""

from __future__ import annotations

import pytest

from graphraft.synthesis.mentions import (
    AutoExtractor,
    LexicalExtractor,
    MarkedMentionExtractor,
    OpenAIChatExtractor,
    parse_entity_list,
)
from graphraft.synthesis.resolution import EntityResolver

from local_endpoint import chat_completion, json_endpoint
from movie_graph import load


def test_marked_mentions_in_brackets_and_quotes():
    extract = MarkedMentionExtractor().extract
    assert [m.text for m in extract("what did [Tom Hanks] act in")] == ["Tom Hanks"]
    assert [m.text for m in extract('films by "Penny Marshall" and “Robert Zemeckis”')] == [
        "Penny Marshall",
        "Robert Zemeckis",
    ]
    assert extract("no marks here") == []


def test_lexical_prefers_longest_then_rarest_at_word_boundaries():
    names = {"tom hanks": 1, "tom": 3, "big": 1, "the big lebowski": 1, "drama": 1, "what": 5}
    extractor = LexicalExtractor(names)
    found = [m.text for m in extractor.extract("Was Tom Hanks in The Big Lebowski, a drama?")]
    assert found == ["tom hanks", "the big lebowski", "drama"]
    # no match inside a word, stopwords are never mentions
    assert extractor.extract("bigger tomatoes, what else") == []


def test_lexical_from_a_store(store):
    load(store)
    extractor = LexicalExtractor.from_store(store)
    assert [m.text for m in extractor.extract("who directed forrest gump?")] == ["forrest gump"]


REPLIES = {"which films did Tom Hanks make with Penny Marshall": '["Tom Hanks", "Penny Marshall", "Big"]'}


def chat_reply(path, body):
    """Just enough of the chat-completions API."""
    return 200, chat_completion(body["model"], REPLIES.get(body["messages"][-1]["content"], "[]"))


@pytest.fixture
def chat_endpoint():
    with json_endpoint(chat_reply) as (url, calls):
        yield url, calls


def test_openai_compatible_extractor_sends_the_few_shot_prompt(chat_endpoint):
    url, calls = chat_endpoint
    extractor = OpenAIChatExtractor("tiny-chat", base_url=url, api_key="secret")
    mentions = extractor.extract("which films did Tom Hanks make with Penny Marshall")
    # "Big" is not in the question, so it is not a mention
    assert [m.text for m in mentions] == ["Tom Hanks", "Penny Marshall"]
    assert all(m.method == "llm" for m in mentions)
    (request,) = calls
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer secret"
    messages = request["body"]["messages"]
    assert request["body"]["model"] == "tiny-chat" and request["body"]["temperature"] == 0
    assert messages[0]["role"] == "system" and "JSON list" in messages[0]["content"]
    assert [m["role"] for m in messages[1:5]] == ["user", "assistant", "user", "assistant"]


def test_auto_uses_marks_first_then_the_endpoint(chat_endpoint):
    url, calls = chat_endpoint
    auto = AutoExtractor(lambda: pytest.fail("lexical not needed"), OpenAIChatExtractor("tiny-chat", base_url=url))
    assert [m.method for m in auto.extract("what did [Tom Hanks] act in")] == ["marked"]
    assert not calls
    assert next(m.text for m in auto.extract("which films did Tom Hanks make with Penny Marshall")) == "Tom Hanks"
    assert len(calls) == 1


def test_auto_falls_back_to_lexical_without_an_endpoint():
    auto = AutoExtractor(lambda: LexicalExtractor({"tom hanks": 1}))
    assert [(m.text, m.method) for m in auto.extract("what did tom hanks act in")] == [("tom hanks", "lexical")]


def test_parse_entity_list_accepts_json_or_lines():
    assert parse_entity_list('Sure! ["A", "B c"]') == ["A", "B c"]
    assert parse_entity_list("- A\n- B c\n") == ["A", "B c"]


@pytest.mark.slow
def test_local_extractor_runs_the_prompt_on_the_bundled_model(graphraft_home):
    from graphraft.models import load_causal_lm
    from graphraft.synthesis.mentions import LocalChatExtractor

    model, tokenizer = load_causal_lm("bundled", graphraft_home)
    mentions = LocalChatExtractor(model, tokenizer).extract("who wrote The Silent Harbor")
    assert [(m.text, m.method) for m in mentions] == [("The Silent Harbor", "llm")]


# ---------------------------------------------------------------------------------- resolution
def test_exact_match_keeps_every_candidate_of_an_ambiguous_name(store):
    load(store)
    anchors = EntityResolver(store).resolve("contact")
    assert sorted((a.id, a.labels, a.method) for a in anchors) == [
        ("b1", ("Book",), "exact"),
        ("m4", ("Movie",), "exact"),
    ]


def test_a_misspelled_name_resolves_through_the_vector_index(store, embedder):
    from graphraft.graph.embeddings import embed_missing_names

    load(store)
    embed_missing_names(store, embedder)
    resolver = EntityResolver(store, lambda: embedder, similarity_floor=0.7, fuzzy_floor=None)
    best = resolver.resolve("Forrest Gum")[0]
    assert (best.id, best.method) == ("m3", "vector") and 0.7 <= best.score < 1.0
    assert resolver.resolve("zzzz qqqq xxxx") == []  # nothing above the floor


def test_without_a_vector_index_names_are_matched_by_their_words(store):
    load(store)
    resolver = EntityResolver(store, fuzzy_floor=None)  # the word match alone
    best = resolver.resolve("Robert Zemeck")
    assert [(a.id, a.method) for a in best] == [("p3", "text")] and 0.5 <= best[0].score < 1.0
    assert resolver.vector_missing  # the caller can say how names were matched
    # every word must be in the name, and the name must be close enough as a whole
    assert resolver.resolve("Forest Gumpp") == []
    assert [a.id for a in resolver.resolve("Science")] == ["g2"]  # most of the name
    assert resolver.resolve("the science of tom hanks") == []


def test_with_a_vector_index_the_text_match_is_not_used(store, embedder):
    from graphraft.graph.embeddings import embed_missing_names

    load(store)
    embed_missing_names(store, embedder)
    resolver = EntityResolver(store, lambda: embedder, similarity_floor=0.99, fuzzy_floor=None)
    assert resolver.resolve("Robert Zemeck") == [] and not resolver.vector_missing


# ---------------------------------------------------------------------------------- typos
def test_a_typo_the_embedding_misses_resolves_by_characters(store, embedder):
    from graphraft.graph.embeddings import embed_missing_names

    load(store)
    embed_missing_names(store, embedder)
    before = EntityResolver(store, lambda: embedder, fuzzy_floor=None)  # the vector match alone
    assert "m3" not in [a.id for a in before.resolve("Forest Gumpp")]  # cosine below the 0.75 floor
    resolver = EntityResolver(store, lambda: embedder)
    best = resolver.resolve("Forest Gumpp")
    assert (best[0].id, best[0].method) == ("m3", "fuzzy") and 0.8 <= best[0].score < 1.0
    assert best[0].name == "Forrest Gump" and best[0].mention == "Forest Gumpp"
    # a spelled-right name is still the exact match alone
    assert [(a.id, a.method) for a in resolver.resolve("forrest gump")] == [("m3", "exact")]
    # far from every name: nothing, however many characters it shares
    assert resolver.resolve("Forest Fire Rump") == []


def test_the_character_match_works_without_a_vector_index(store):
    load(store)
    resolver = EntityResolver(store)
    assert [(a.id, a.method) for a in resolver.resolve("Forest Gumpp")] == [("m3", "fuzzy")]
    assert resolver.vector_missing


def test_fuzzy_floor_and_candidate_count_bound_the_anchors(store):
    load(store)
    # "Tom Hank" is one edit from "Tom Hanks"; a low floor lets more names in, the count caps them
    loose = EntityResolver(store, fuzzy_floor=0.3, fuzzy_candidates=5, max_candidates=10)._fuzzy_match("Tom Hank")
    strict = EntityResolver(store, fuzzy_floor=0.9)._fuzzy_match("Tom Hank")
    assert [a.id for a in strict] == ["p1"] and len(loose) > 1 and loose[0].id == "p1"
    assert all(a.score >= 0.3 for a in loose) and len({a.name for a in loose}) <= 5
    pooled = EntityResolver(store, fuzzy_floor=0.3, fuzzy_candidates=5, max_candidates=2, close_margin=None).resolve(
        "Tom Hank"
    )
    assert len(pooled) == 2 and pooled[0].id == "p1"  # one anchor a node, the best first, at most max_candidates


def test_a_misspelled_name_keeps_the_close_names_and_not_a_shorter_one(store):
    from graphraft.graph.records import NodeRecord

    load(store)
    store.load_nodes(
        [NodeRecord("m5", ("Movie",), {"name": "Inside Man"}), NodeRecord("m6", ("Movie",), {"name": "Inside"})]
    )
    # "inside mn" is 0.95 from Inside Man and 0.80 from Inside: both pass the floor, but a
    # candidate that far below the best is the kind L1 then picks by mistake
    every = EntityResolver(store, close_margin=None).resolve("Inside Mn")
    assert [a.id for a in every] == ["m5", "m6"]
    assert [a.id for a in EntityResolver(store).resolve("Inside Mn")] == ["m5"]
    # names about as close stay side by side: the choice is L1's
    store.load_nodes([NodeRecord("m7", ("Movie",), {"name": "Inside Men"})])
    assert {a.id for a in EntityResolver(store).resolve("Inside Mn")} == {"m5", "m7"}
