import { Field, Float, ObjectType, registerEnumType } from 'type-graphql';

export enum ExportState {
  ABSENT = 'ABSENT',
  PROCESSING = 'PROCESSING',
  READY = 'READY',
}
registerEnumType(ExportState, {
  name: 'ExportState',
  description: 'Whether a version has an export file (spec operations §3, §4.8).',
});

@ObjectType('Export', { description: "A repository version's export (REST `…/:version/export/`)." })
export class ExportType {
  @Field(() => ExportState)
  state: ExportState;

  @Field(() => String, {
    nullable: true,
    description: '`[:repositoryId]_[:repoVersion].[:lastUpdated].zip` once ready.',
  })
  fileName: string | null;

  @Field(() => Float, { nullable: true, description: 'Bytes of the zip, once ready.' })
  size: number | null;

  @Field(() => Date, {
    nullable: true,
    description: 'The time in the file name: read changes since it (`updatedSince`).',
  })
  lastUpdated: Date | null;

  @Field(() => String, {
    nullable: true,
    description: 'A single-use download address that expires (REST `exportURL`), once ready.',
  })
  downloadUrl: string | null;
}

export enum ExportOutcome {
  QUEUED = 'QUEUED',
  EXISTS = 'EXISTS',
  PROCESSING = 'PROCESSING',
}
registerEnumType(ExportOutcome, {
  name: 'ExportOutcome',
  description:
    'What asking for an export did: queued it (REST 202), or it exists (200) or is being written (409).',
});

@ObjectType('ExportRequest')
export class ExportRequestType {
  @Field(() => ExportOutcome)
  outcome: ExportOutcome;

  @Field(() => String, { nullable: true, description: 'The task writing it, when queued.' })
  taskId: string | null;
}
