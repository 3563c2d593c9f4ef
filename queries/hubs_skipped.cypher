// How many of the anchor's neighbours were hubs that enumeration did not expand.
MATCH (a:__Entity__ {id: $anchor})--(m1)
WITH DISTINCT m1
WITH m1, size([(m1)--() | 1]) AS degree
WHERE degree > $cap
RETURN count(m1) AS hubs
