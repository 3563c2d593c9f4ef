// Length-2 paths joining two anchors; the node in the middle is the target.
MATCH (a:__Entity__ {id: $anchor})-[r1]-(t)-[r2]-(b:__Entity__ {id: $other})
WHERE t <> a AND t <> b
WITH type(r1) AS type1, startNode(r1) = a AS out1, labels(t) AS labels1,
     type(r2) AS type2, startNode(r2) = t AS out2, labels(b) AS labels2, t
RETURN type1, out1, labels1, type2, out2, labels2,
       count(DISTINCT t) AS total,
       count(DISTINCT CASE WHEN t.id IN $answer_ids THEN t.id END)
         + count(DISTINCT CASE WHEN coalesce(t.name_text, t.name) IN $answer_names THEN coalesce(t.name_text, t.name) END) AS hits
