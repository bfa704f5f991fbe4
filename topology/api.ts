/** Request subjects a service answers, for any NATS client. */
export const API_SUBJECTS = {
  /** the crawl jobs API (`crawl serve`): `crawl.api.jobs.<operation>` */
  jobs: 'crawl.api.jobs',
} as const;
