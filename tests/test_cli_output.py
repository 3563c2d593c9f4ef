"""What the command line prints is what the database and the pipeline said, literally: query
errors, names and evidence holding brackets or markup are not eaten by the terminal's markup."""

from __future__ import annotations

from graphraft.cli.ask import print_answer
from graphraft.cli.graph import print_rows
from graphraft.inference.pipeline import Answer, AnswerNode, QueryInfo


def test_an_answer_with_a_query_error_and_markup_in_values_prints_literally(capsys):
    answer = Answer(
        question="who directed [Heat]",
        answers=[AnswerNode(id="p1", name="[bold]Michael[/bold] Mann [1943]", labels=["Person"], rank=1)],
        queries=[
            QueryInfo(
                cypher='MATCH (a {id: "m[1]"})-[r1:DIRECTED_BY]->(t) RETURN t.id', score=-0.1, results=1, seconds=0.01
            ),
            QueryInfo(
                cypher="MATCH (a)-[r1:X]->(t) RETURN t.id",
                score=-2.0,
                results=0,
                seconds=0.5,
                error="timed out [5000 ms]",
            ),
        ],
        anchors=[{"name": "Heat [film]", "method": "exact"}],
        evidence="Pattern 1: (Heat:Movie)-[:DIRECTED_BY]->(?:Person)\n  [red]Michael Mann[/red]",
        timings={"total": 0.6},
    )
    print_answer(answer)
    printed = capsys.readouterr().out
    assert "[bold]Michael[/bold] Mann [1943]" in printed
    assert "-[r1:DIRECTED_BY]->(t) RETURN t.id  [1 results, 10 ms]" in printed
    assert "[error: timed out [5000 ms], 500 ms]" in printed
    assert "Heat [film] (exact)" in printed
    assert "[red]Michael Mann[/red]" in printed and "(Heat:Movie)-[:DIRECTED_BY]->(?:Person)" in printed


def test_query_rows_print_values_and_column_names_literally(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    print_rows([{"[b]title[/b]": "[red]Heat[/red]", "year": "[1995]"}, {"[b]title[/b]": "Big", "year": 1988}])
    printed = capsys.readouterr().out
    assert "[b]title[/b]" in printed and "[red]Heat[/red]" in printed and "[1995]" in printed


def test_values_print_literally_with_names_for_ids(capsys):
    answer = Answer(
        question="when was [Keanu Reeves] born",
        retrieved=[AnswerNode(id="p:keanu", name="Keanu [Reeves]", labels=["Person"], rank=0)],
        values=[{"id": "p:keanu", "born": 1964, "tagline": "[red]Whoa[/red]"}],
        timings={"total": 0.1},
    )
    print_answer(answer)
    printed = capsys.readouterr().out
    assert "Values (1 rows):" in printed
    assert "id: Keanu [Reeves]; born: 1964; tagline: [red]Whoa[/red]" in printed
