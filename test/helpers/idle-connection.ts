// A TCP connection that says nothing, as an attacker holding sockets open would make.
import { createConnection, type Socket } from 'node:net';

export interface IdleConnection {
  socket: Socket;
  /** The server closed it within 3 s of connecting (long before any timeout of the broker or HTTP server). */
  closedAtOnce: boolean;
}

/** Opens a connection to 127.0.0.1:`port` from `localAddress` (any 127.x address is this machine); `held` collects it for cleanup. */
export function openIdle(port: number, localAddress: string, held: Socket[]): Promise<IdleConnection> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port, localAddress });
    socket.on('error', () => {});
    socket.once('connect', () => {
      held.push(socket);
      const timer = setTimeout(() => resolve({ socket, closedAtOnce: false }), 3000);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve({ socket, closedAtOnce: true });
      });
    });
    socket.once('error', reject);
  });
}
