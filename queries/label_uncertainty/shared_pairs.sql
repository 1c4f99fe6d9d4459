-- name: lu_shared_pairs
-- description: The confusion counts of the machine set against the reference: pairs both judged, by (machine grade, reference grade).
-- params:
-- reference: methods §12.2
-- Every pair of the collection both sets judged (grade >= 0 on both sides) counts, in any
-- topic: the confusion matrix is the judge's, not a topic's.
SELECT machine_grade, reference_grade, CAST(count(*) AS INTEGER) AS pairs
FROM lu_labels
WHERE reference_grade IS NOT NULL AND machine_grade IS NOT NULL
GROUP BY machine_grade, reference_grade
ORDER BY machine_grade, reference_grade;
