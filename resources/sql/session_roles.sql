-- The login role of this session and the Redrive group roles it holds (directly or through
-- other roles), for the status bar and for hiding actions a role cannot take.
SELECT session_user::text AS login_role,
       coalesce(array_agg(r.rolname ORDER BY r.rolname)
                    FILTER (WHERE r.rolname IS NOT NULL), '{}')::text[] AS redrive_roles
  FROM pg_catalog.pg_roles AS r
 WHERE r.rolname IN ('redrive_auditor', 'redrive_oncall', 'redrive_support', 'redrive_approver')
   AND pg_catalog.pg_has_role(session_user, r.oid, 'USAGE')
