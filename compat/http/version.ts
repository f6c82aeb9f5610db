/** The API version is the services' (spec core §9.1): GraphQL's `apiVersion` answers it too. */
export { API_VERSION } from '../../src/services';
