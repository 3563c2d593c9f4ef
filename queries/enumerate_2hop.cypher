// 2-hop patterns around one anchor; the middle node is not expanded when it is a hub.
MATCH (a:__Entity__ {id: $anchor})-[r1]-(m1)
WITH a, r1, m1, size([(m1)--() | 1]) AS degree1
WHERE degree1 <= $cap
MATCH (m1)-[r2]-(t)
WHERE r2 <> r1 AND t <> a
WITH type(r1) AS type1, startNode(r1) = a AS out1, labels(m1) AS labels1,
     type(r2) AS type2, startNode(r2) = m1 AS out2, labels(t) AS labels2, t
RETURN type1, out1, labels1, type2, out2, labels2,
       count(DISTINCT t) AS total,
       count(DISTINCT CASE WHEN t.id IN $answer_ids THEN t.id END)
         + count(DISTINCT CASE WHEN coalesce(t.name_text, t.name) IN $answer_names THEN coalesce(t.name_text, t.name) END) AS hits
