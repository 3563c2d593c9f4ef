// 3-hop patterns around one anchor; hubs among the two middle nodes are not expanded.
MATCH (a:__Entity__ {id: $anchor})-[r1]-(m1)
WITH a, r1, m1, size([(m1)--() | 1]) AS degree1
WHERE degree1 <= $cap
MATCH (m1)-[r2]-(m2)
WHERE r2 <> r1
WITH a, r1, m1, r2, m2, size([(m2)--() | 1]) AS degree2
WHERE degree2 <= $cap
MATCH (m2)-[r3]-(t)
WHERE r3 <> r1 AND r3 <> r2 AND t <> a
WITH type(r1) AS type1, startNode(r1) = a AS out1, labels(m1) AS labels1,
     type(r2) AS type2, startNode(r2) = m1 AS out2, labels(m2) AS labels2,
     type(r3) AS type3, startNode(r3) = m2 AS out3, labels(t) AS labels3, t
RETURN type1, out1, labels1, type2, out2, labels2, type3, out3, labels3,
       count(DISTINCT t) AS total,
       count(DISTINCT CASE WHEN t.id IN $answer_ids THEN t.id END)
         + count(DISTINCT CASE WHEN coalesce(t.name_text, t.name) IN $answer_names THEN coalesce(t.name_text, t.name) END) AS hits
