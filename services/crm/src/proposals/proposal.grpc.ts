import { invalidField, isUuid } from '@svc/platform/errors';
import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { ServiceContext } from '@svc/platform/service';
import {
  type AttachProposalFileRequest,
  type AttachProposalFileResponse,
  type DetachProposalFileRequest,
  type DetachProposalFileResponse,
  type GetProposalAccessRequest,
  type GetProposalAccessResponse,
  ProposalFileServiceService,
} from '@svc/proto/crm/v1/proposals';
import type { Proposals } from './proposal.service.js';

const actorOf = (req: { company_id: string; viewer_user_id: string }) => {
  if (!isUuid(req.company_id)) throw invalidField('company_id', 'must be a UUID');
  if (!isUuid(req.viewer_user_id)) throw invalidField('viewer_user_id', 'must be a UUID');
  return { companyId: req.company_id, userId: req.viewer_user_id };
};

/** crm.v1.ProposalFileService: the files service's view of proposals (decision 0078). */
export function proposalGrpc(ctx: ServiceContext, proposals: Proposals): GrpcServiceRegistration {
  return {
    definition: ProposalFileServiceService,
    implementation: {
      getProposalAccess: unary<GetProposalAccessRequest, GetProposalAccessResponse>(ctx.logger, async (req) => ({
        visible: await proposals.access(actorOf(req), req.proposal_id, req.file_id),
      })),
      attachProposalFile: unary<AttachProposalFileRequest, AttachProposalFileResponse>(ctx.logger, async (req) => {
        if (!isUuid(req.file_id)) throw invalidField('file_id', 'must be a UUID');
        const { attachmentId, createdAt } = await proposals.attachFile(actorOf(req), req.proposal_id, {
          fileId: req.file_id,
          fileName: req.file_name,
          mimeType: req.mime_type,
          fileSize: req.file_size,
        });
        return { attachment_id: attachmentId, created_at: createdAt };
      }),
      detachProposalFile: unary<DetachProposalFileRequest, DetachProposalFileResponse>(ctx.logger, async (req) => {
        if (!isUuid(req.company_id)) throw invalidField('company_id', 'must be a UUID');
        return { removed: await proposals.detachFile(req.company_id, req.proposal_id, req.file_id) };
      }),
    },
  };
}
