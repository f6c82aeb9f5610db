import type { NextFunction, Request, Response } from 'express';
import { errorBody } from './errors';
import { queryString } from './query';

/** JSON is the only request body format (spec core §1.6). */
export function requireJsonBody(req: Request, res: Response, next: NextFunction): void {
  const hasBody =
    Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    res
      .status(415)
      .json(errorBody(415, 'Request bodies must be JSON (Content-Type: application/json).'));
    return;
  }
  next();
}

/**
 * JSON is what the REST edge answers (exports and `Compress: true` reads: zips), so a request
 * asking only for another format (`Accept: application/xml`, `text/csv`; `?format=xml` on a read)
 * gets 406 rather than JSON it did not ask for (spec core §1.6). Mounted on the REST router only.
 */
export function requireJsonAnswer(req: Request, res: Response, next: NextFunction): void {
  const format =
    req.method === 'GET' || req.method === 'HEAD' ? queryString(req, 'format') : undefined;
  const unsupported =
    format !== undefined && format.toLowerCase() !== 'json'
      ? `The format '${format}' is not supported; this API answers JSON.`
      : req.accepts(['application/json', 'application/zip']) === false
        ? `None of the accepted formats '${req.get('accept')}' can be produced; this API answers JSON.`
        : null;
  if (unsupported) {
    res.status(406).json(errorBody(406, unsupported));
    return;
  }
  next();
}
