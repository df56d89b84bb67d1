-- How many audit entries there are: the total of the client-side verifier's progress.
SELECT count(*) FROM redrive.audit_log
