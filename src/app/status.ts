// `spectune status`: unit state, engine settings in force, health.
import type { EventSink } from '../tune/events.js';
import type { ServiceStatus } from '../service/index.js';
import { openService, type ServiceTarget } from './service-target.js';

// Read the status of the target service.
export async function readServiceStatus(target: ServiceTarget, onEvent: EventSink): Promise<ServiceStatus & { endpoint: string }> {
  const svc = await openService(target, onEvent);
  try {
    return { ...(await svc.controller.status()), endpoint: svc.endpoint };
  } finally {
    await svc.close();
  }
}
