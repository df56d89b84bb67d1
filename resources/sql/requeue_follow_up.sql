-- Where the dead letters of a requeue went (docs/domain.md#failure-groups): of dead letters $1
-- (bigint[]), how many still wait for the worker to carry the requeue out (requeued, its outbox
-- command pending or being processed), are in flight (requeued and carried out: the job is
-- queued or running again; an adapter's requeue is carried out at once), whose requeue failed
-- (outbox command failed), that succeeded after the requeue, that died again (open again), and
-- that went elsewhere (resolved by hand, compensation, ...). One row.
SELECT count(*) FILTER (WHERE d.status = 'requeued' AND o.status IN ('pending', 'processing'))
           AS waiting,
       count(*) FILTER (WHERE d.status = 'requeued' AND (o.status IS NULL OR o.status = 'done'))
           AS in_flight,
       count(*) FILTER (WHERE d.status = 'requeued' AND o.status = 'failed') AS requeue_failed,
       count(*) FILTER (WHERE d.status = 'resolved' AND d.resolution = 'succeeded_after_requeue')
           AS succeeded,
       count(*) FILTER (WHERE d.status = 'open') AS dead_again,
       count(*) FILTER (WHERE d.status NOT IN ('requeued', 'open')
                          AND (d.status <> 'resolved'
                               OR d.resolution IS DISTINCT FROM 'succeeded_after_requeue'))
           AS elsewhere
  FROM dead_letter_list d
  LEFT JOIN LATERAL (SELECT ob.status FROM outbox_list ob
                      WHERE ob.target_type = 'job' AND ob.target_id = d.job_ref
                        AND ob.command = 'requeue'
                      ORDER BY ob.id DESC LIMIT 1) o ON true
 WHERE d.id IN (SELECT unnest($1::bigint[]))
