"""Writes the shipped demo graph (graphraft/data/demo/): a fictional literary world of
books, authors, publishers, genres, cities and awards, with descriptions, and question/
answer pairs of 1, 2 and 3 hops whose answers are computed from the graph itself.

Deterministic: running it again writes the same files. Run: python scripts/make_demo_graph.py
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "graphraft" / "data" / "demo"
rng = random.Random(20261121)

FIRST = [
    "Ada",
    "Bruno",
    "Clara",
    "Dmitri",
    "Elena",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kaito",
    "Lena",
    "Mateo",
    "Nadia",
    "Oskar",
    "Priya",
    "Quentin",
    "Rosa",
    "Soren",
    "Talia",
    "Umar",
    "Vera",
    "Wendell",
    "Ximena",
    "Yusuf",
    "Zoë",
    "Amara",
    "Bastian",
    "Céline",
    "Declan",
    "Esther",
    "Felix",
    "Giulia",
    "Henrik",
    "Isolde",
    "José",
    "Katya",
    "Linus",
    "Marguerite",
    "Niamh",
]
LAST = [
    "Albright",
    "Brennan",
    "Castellano",
    "Draper",
    "Eklund",
    "Fairweather",
    "Galloway",
    "Haldane",
    "Ishikawa",
    "Jovanović",
    "Kessler",
    "Lindqvist",
    "Montague",
    "Nakamura",
    "O'Connell",
    "Pereira",
    "Quinlan",
    "Rasmussen",
    "Sørensen",
    "Thorne",
    "Underwood",
    "Valdés",
    "Whitlock",
    "Yamamoto",
    "Zielinski",
    "Abernathy",
    "Blackwood",
    "Crane",
    "Delacroix",
    "Everhart",
]
CITIES = {
    "Lisbon": "Portugal",
    "Oslo": "Norway",
    "Kyoto": "Japan",
    "Valparaíso": "Chile",
    "Edinburgh": "Scotland",
    "Kraków": "Poland",
    "Montréal": "Canada",
    "Tbilisi": "Georgia",
    "Marrakesh": "Morocco",
    "Reykjavík": "Iceland",
    "Trieste": "Italy",
    "Dubrovnik": "Croatia",
    "Hobart": "Australia",
    "Cartagena": "Colombia",
    "Galway": "Ireland",
    "Tallinn": "Estonia",
    "Porto": "Portugal",
    "Bergen": "Norway",
    "Salzburg": "Austria",
    "Zanzibar City": "Tanzania",
    "Ljubljana": "Slovenia",
    "Hanoi": "Vietnam",
    "Seville": "Spain",
    "Gdańsk": "Poland",
    "Quebec City": "Canada",
}
GENRES = {
    "Mystery": "puzzles, detectives and crimes to be solved",
    "Science Fiction": "futures, technologies and other worlds",
    "Fantasy": "magic, myth and invented realms",
    "Historical Fiction": "stories set in a carefully researched past",
    "Romance": "love stories and the people in them",
    "Thriller": "suspense, danger and a race against time",
    "Literary Fiction": "character, language and the inner life",
    "Horror": "dread, the uncanny and the supernatural",
    "Adventure": "journeys, quests and daring exploits",
    "Poetry": "verse in all its forms",
    "Memoir": "true stories told by those who lived them",
    "Travel Writing": "places, roads and the people met on them",
}
ADJ = [
    "Silent",
    "Crimson",
    "Forgotten",
    "Hollow",
    "Glass",
    "Northern",
    "Burning",
    "Quiet",
    "Distant",
    "Broken",
    "Golden",
    "Salt",
    "Winter",
    "Hidden",
    "Last",
    "Iron",
    "Paper",
    "Drowned",
    "Wandering",
    "Bright",
]
NOUN = [
    "Harbor",
    "Orchard",
    "Lighthouse",
    "Cartographer",
    "Garden",
    "Archive",
    "River",
    "Station",
    "Bridge",
    "Island",
    "Clockmaker",
    "Library",
    "Tide",
    "Mountain",
    "Compass",
    "Lantern",
    "Kingdom",
    "Ferry",
    "Observatory",
    "Violin",
]
PUBLISHERS = [
    "Marlow & Finch",
    "Heron Press",
    "Blue Anchor Books",
    "Quillfeather House",
    "Northlight Editions",
    "Saltmarsh Publishing",
    "Copperleaf Press",
    "Ravenstone Books",
    "Open Road Editions",
    "Tidewater House",
    "Lantern Hill Press",
    "Juniper & Vale",
]
AWARDS = [
    "Silver Quill Prize",
    "Harbor Light Award",
    "Golden Compass Medal",
    "Meridian Book Prize",
    "Nightingale Award",
    "Aurora Fiction Prize",
    "Cartographers' Circle Award",
    "Evergreen Medal",
    "Lamplighter Prize",
    "Northern Star Award",
]
SPECIAL_TITLES = [
    "The Cartographer's Daughter",
    'The "Last" Lighthouse',
    "Señora Ruiz and the Sea",
    "Back\\slash: A Memoir",
    "Ærø Nights",
    "Café Müller",
]


def slug(text: str) -> str:
    return "".join(ch.lower() if ch.isalnum() else "-" for ch in text).strip("-")


def main() -> None:
    nodes: dict[str, dict] = {}
    edges: list[tuple[str, str, str]] = []

    def add(label: str, name: str, **props) -> str:
        node_id = f"{label.lower()}-{slug(name)}"
        nodes[node_id] = {"id": node_id, "labels": [label], "properties": {"name": name, **props}}
        return node_id

    cities = {
        name: add(
            "City",
            name,
            country=country,
            description=f"{name} is a city in {country} that appears often in this catalogue.",
        )
        for name, country in CITIES.items()
    }
    genres = {name: add("Genre", name, description=f"{name}: {about}.") for name, about in GENRES.items()}
    publishers = {}
    for name in PUBLISHERS:
        city = rng.choice(list(cities))
        publishers[name] = add(
            "Publisher",
            name,
            founded=rng.randint(1890, 2010),
            description=f"{name} is an independent publisher based in {city}.",
        )
        edges.append((publishers[name], "BASED_IN", cities[city]))
    awards = {
        name: add(
            "Award",
            name,
            established=rng.randint(1950, 2015),
            description=f"The {name} is a literary award given each year to one or more books.",
        )
        for name in AWARDS
    }

    author_names: list[str] = []
    while len(author_names) < 70:
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name not in author_names:
            author_names.append(name)
    authors = {}
    author_genres: dict[str, list[str]] = {}
    for name in author_names:
        city = rng.choice(list(cities))
        born = rng.randint(1930, 1995)
        favourite = rng.sample(list(genres), 2)
        author_genres[name] = favourite
        authors[name] = add(
            "Author",
            name,
            born=born,
            description=f"{name} (born {born} in {city}) writes mostly "
            f"{favourite[0].lower()} and {favourite[1].lower()}.",
        )
        edges.append((authors[name], "BORN_IN", cities[city]))

    titles: list[str] = list(SPECIAL_TITLES)
    while len(titles) < 150:
        title = f"The {rng.choice(ADJ)} {rng.choice(NOUN)}"
        if title not in titles:
            titles.append(title)
    for title in titles:
        writers = rng.sample(author_names, 2 if rng.random() < 0.12 else 1)
        genre_pool = list(dict.fromkeys(g for w in writers for g in author_genres[w]))
        book_genres = rng.sample(genre_pool, min(len(genre_pool), 1 if rng.random() < 0.6 else 2))
        publisher = rng.choice(PUBLISHERS)
        year = rng.randint(1965, 2025)
        setting = rng.choice(list(cities)) if rng.random() < 0.5 else None
        prizes = rng.sample(AWARDS, 1) if rng.random() < 0.25 else []
        text = (
            f"{title} is a {' and '.join(g.lower() for g in book_genres)} book by "
            f"{' and '.join(writers)}, published by {publisher} in {year}."
        )
        if setting:
            text += f" It is set in {setting}."
        if prizes:
            text += f" It won the {prizes[0]}."
        book = add("Book", title, year=year, description=text)
        edges += [(book, "WRITTEN_BY", authors[w]) for w in writers]
        edges += [(book, "HAS_GENRE", genres[g]) for g in book_genres]
        edges.append((book, "PUBLISHED_BY", publishers[publisher]))
        if setting:
            edges.append((book, "SET_IN", cities[setting]))
        edges += [(book, "WON", awards[p]) for p in prizes]

    questions = make_questions(nodes, edges)
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "nodes.jsonl").open("w", encoding="utf-8") as f:
        for node in nodes.values():
            f.write(json.dumps(node, ensure_ascii=False) + "\n")
    with (OUT / "relationships.jsonl").open("w", encoding="utf-8") as f:
        for source, rel_type, target in edges:
            f.write(json.dumps({"source": source, "target": target, "type": rel_type}, ensure_ascii=False) + "\n")
    with (OUT / "questions.jsonl").open("w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{len(nodes)} nodes, {len(edges)} relationships, {len(questions)} questions -> {OUT}")


# (path of (type, direction) steps, anchor label, question phrasings); direction '>' follows the
# arrow from the current node, '<' walks it backwards.
TEMPLATES = [
    ([("WRITTEN_BY", ">")], "Book", ["who wrote [{}]", "who is the author of [{}]"]),
    ([("PUBLISHED_BY", ">")], "Book", ["which publisher published [{}]", "who published [{}]"]),
    ([("HAS_GENRE", ">")], "Book", ["what genre is [{}]", "what kind of book is [{}]"]),
    ([("BORN_IN", ">")], "Author", ["where was [{}] born", "what is the birthplace of [{}]"]),
    ([("WRITTEN_BY", "<")], "Author", ["which books did [{}] write", "what has [{}] written"]),
    ([("WON", "<")], "Award", ["which books won the [{}]", "what books received the [{}]"]),
    ([("SET_IN", "<")], "City", ["which books are set in [{}]", "what stories take place in [{}]"]),
    ([("BASED_IN", ">")], "Publisher", ["where is [{}] based", "in which city is [{}]"]),
    (
        [("WRITTEN_BY", "<"), ("HAS_GENRE", ">")],
        "Author",
        ["which genres does [{}] write in", "what genres are the books of [{}]"],
    ),
    (
        [("WRITTEN_BY", "<"), ("PUBLISHED_BY", ">")],
        "Author",
        ["which publishers published books by [{}]", "who publishes [{}]"],
    ),
    (
        [("WRITTEN_BY", ">"), ("BORN_IN", ">")],
        "Book",
        ["where was the author of [{}] born", "in which city was the writer of [{}] born"],
    ),
    (
        [("PUBLISHED_BY", "<"), ("WRITTEN_BY", ">")],
        "Publisher",
        ["which authors have books published by [{}]", "who writes for [{}]"],
    ),
    (
        [("WRITTEN_BY", "<"), ("WON", ">")],
        "Author",
        ["which awards have the books of [{}] won", "what prizes did books by [{}] win"],
    ),
    (
        [("BASED_IN", ">"), ("BORN_IN", "<")],
        "Publisher",
        ["which authors were born in the city where [{}] is based", "who was born in the home city of [{}]"],
    ),
    (
        [("WRITTEN_BY", ">"), ("WRITTEN_BY", "<"), ("HAS_GENRE", ">")],
        "Book",
        ["what genres are the other books by the author of [{}]", "which genres did the writer of [{}] also write in"],
    ),
    (
        [("BORN_IN", "<"), ("WRITTEN_BY", "<"), ("PUBLISHED_BY", ">")],
        "City",
        ["which publishers published books by authors born in [{}]", "who publishes the writers born in [{}]"],
    ),
    (
        [("BORN_IN", "<"), ("WRITTEN_BY", "<"), ("WON", ">")],
        "City",
        ["which awards were won by books of authors born in [{}]", "what prizes went to books by writers from [{}]"],
    ),
    (
        [("WRITTEN_BY", ">"), ("WRITTEN_BY", "<"), ("PUBLISHED_BY", ">")],
        "Book",
        [
            "which publishers published the other books by the author of [{}]",
            "who published the other books of the writer of [{}]",
        ],
    ),
    (
        [("WON", "<"), ("WRITTEN_BY", ">"), ("BORN_IN", ">")],
        "Award",
        [
            "where were the authors born whose books won the [{}]",
            "in which cities were the writers of [{}] winning books born",
        ],
    ),
]


def make_questions(nodes: dict[str, dict], edges: list[tuple[str, str, str]]) -> list[dict]:
    """Answers follow the one-path semantics of the queries: no relationship twice, anchor excluded."""
    out_edges: dict[tuple[str, str], list[int]] = defaultdict(list)
    in_edges: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, (source, rel_type, target) in enumerate(edges):
        out_edges[(source, rel_type)].append(index)
        in_edges[(target, rel_type)].append(index)

    def walk(anchor: str, steps) -> set[str]:
        frontier = [(anchor, frozenset())]
        for rel_type, direction in steps:
            nxt = []
            for node, used in frontier:
                table = out_edges if direction == ">" else in_edges
                for index in table.get((node, rel_type), []):
                    if index in used:
                        continue
                    source, _, target = edges[index]
                    nxt.append((target if direction == ">" else source, used | {index}))
            frontier = nxt
        return {node for node, _ in frontier if node != anchor}

    by_label: dict[str, list[str]] = defaultdict(list)
    for node_id, node in nodes.items():
        by_label[node["labels"][0]].append(node_id)
    questions = []
    for steps, label, phrasings in TEMPLATES:
        anchors = sorted(by_label[label])
        rng.shuffle(anchors)
        kept = 0
        for anchor in anchors:
            answers = walk(anchor, steps)
            if not answers or len(answers) > 12:
                continue
            name = nodes[anchor]["properties"]["name"]
            questions.append(
                {
                    "question": rng.choice(phrasings).format(name),
                    "answers": sorted(nodes[a]["properties"]["name"] for a in answers),
                    "answer_ids": sorted(answers),
                    "hops": len(steps),
                    "type": "_".join(t.lower() + ("" if d == ">" else "_of") for t, d in steps),
                }
            )
            kept += 1
            if kept == 18:
                break
    return questions


if __name__ == "__main__":
    main()
