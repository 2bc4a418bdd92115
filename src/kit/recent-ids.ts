// The ids seen last, up to a limit: a late duplicate (an MQTT redelivery, a result after its call
// ended) is recognised without the memory growing forever. Adding beyond the limit forgets the oldest.

export class RecentIds {
  private readonly ids = new Set<string>();
  // A ring beside the set: evicting the oldest stays O(1) (deleting a Set's first entry again and again
  // makes V8 skip ever more tombstones).
  private readonly ring: (string | undefined)[];
  private next = 0;

  constructor(private readonly limit: number) {
    this.ring = new Array<string | undefined>(limit);
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    const evicted = this.ring[this.next];
    if (evicted !== undefined) this.ids.delete(evicted);
    this.ring[this.next] = id;
    this.next = (this.next + 1) % this.limit;
    this.ids.add(id);
  }
}
