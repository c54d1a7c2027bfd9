"""AdvancedCronJob: cron grammar (:mod:`.cron`), pure core (:mod:`.plan`) and admission (:mod:`.webhooks`)."""
