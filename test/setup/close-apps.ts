import { closeOpenApps } from '../factories/open-apps';

// Every test file: close the apps it left open (see `closeOpenApps`).
afterAll(closeOpenApps);
