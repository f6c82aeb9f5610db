/** The API generation and revision (spec core §9.1), also sent as `X-OCL-API-VERSION`. */
export const API_VERSION = '2.0.0';
