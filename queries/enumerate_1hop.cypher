// 1-hop patterns around one anchor, aggregated per (type, direction, target labels).
MATCH (a:__Entity__ {id: $anchor})-[r1]-(t)
WHERE t <> a
WITH type(r1) AS type1, startNode(r1) = a AS out1, labels(t) AS labels1, t
RETURN type1, out1, labels1,
       count(DISTINCT t) AS total,
       count(DISTINCT CASE WHEN t.id IN $answer_ids THEN t.id END)
         + count(DISTINCT CASE WHEN coalesce(t.name_text, t.name) IN $answer_names THEN coalesce(t.name_text, t.name) END) AS hits
