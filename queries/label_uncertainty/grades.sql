-- name: lu_grades
-- description: The distinct grades each set gave (grade >= 0), one row per (side, grade).
-- params:
-- The confusion matrix has a row per grade of the machine set and a column per grade of the
-- reference set, including grades that no shared pair shows (the prior smooths them).
SELECT 'machine' AS side, machine_grade AS grade
FROM lu_labels
WHERE machine_grade IS NOT NULL
GROUP BY machine_grade
UNION ALL
SELECT 'reference', reference_grade
FROM lu_labels
WHERE reference_grade IS NOT NULL
GROUP BY reference_grade
ORDER BY 1, 2;
