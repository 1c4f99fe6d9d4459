-- name: lu_machine_docs
-- description: The documents only the machine set judged, in doc_no order: topic number and the machine's grade.
-- params:
-- reference: methods §12.1
-- Reads lu_machine_docs of labels.sql. Each of them gets one random human-equivalent grade
-- per replicate, shared by every run that retrieved it.
SELECT doc_no, topic_no, machine_grade
FROM lu_machine_docs
ORDER BY doc_no;
