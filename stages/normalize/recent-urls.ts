/**
 * URLs this process has recently sent on to the seen-filter. Navigation links repeat on
 * every page of a host, so most candidates are URLs already on their way; skipping those
 * saves a message and a seen-set lookup each. A URL is added once its candidate is published
 * (never before: a failed publish is redelivered, and must forward it again). Safe to lose at
 * any time: the first copy is already in the stream, and the seen-filter stays the authority. Bounded: when full, the
 * older half is forgotten.
 */
export class RecentUrls {
  private current = new Set<string>();
  private previous = new Set<string>();

  constructor(private readonly capacity = 200_000) {}

  has(url: string): boolean {
    return this.current.has(url) || this.previous.has(url);
  }

  add(url: string): void {
    if (this.current.size >= this.capacity / 2) {
      this.previous = this.current;
      this.current = new Set();
    }
    this.current.add(url);
  }
}
