// Something the user started and waits for (a call, a lookup): whether it is under way, and how it failed.
export class Task {
  busy = $state(false);
  failure = $state('');

  /** Runs `action`, its error becoming `failure`; resolves with its value, or undefined when it failed. */
  async run<T>(action: () => Promise<T>): Promise<T | undefined> {
    this.busy = true;
    this.failure = '';
    try {
      return await action();
    } catch (e) {
      this.failure = (e as Error).message;
      return undefined;
    } finally {
      this.busy = false;
    }
  }
}
