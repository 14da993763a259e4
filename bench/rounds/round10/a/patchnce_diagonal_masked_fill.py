# label: safe
# why: PatchNCELoss fills the self-similarity diagonal with masked_fill_ on the freshly computed bmm output; bmm saved its inputs, not its output, so the in-place fill is harmless
# source: https://github.com/taesungp/contrastive-unpaired-translation/issues/47
import torch
import torch.nn as nn

torch.manual_seed(0)


class Opt:
    nce_T = 0.07
    batch_size = 2
    nce_includes_all_negatives_from_minibatch = False


class PatchNCELoss(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.opt = opt
        self.cross_entropy_loss = torch.nn.CrossEntropyLoss(reduction='none')
        self.mask_dtype = torch.bool

    def forward(self, feat_q, feat_k):
        num_patches = feat_q.shape[0]
        dim = feat_q.shape[1]
        feat_k = feat_k.detach()

        # pos logit
        l_pos = torch.bmm(feat_q.view(num_patches, 1, -1), feat_k.view(num_patches, -1, 1))
        l_pos = l_pos.view(num_patches, 1)

        # neg logit
        if self.opt.nce_includes_all_negatives_from_minibatch:
            batch_dim_for_bmm = 1
        else:
            batch_dim_for_bmm = self.opt.batch_size

        # reshape features to batch size
        feat_q = feat_q.view(batch_dim_for_bmm, -1, dim)
        feat_k = feat_k.view(batch_dim_for_bmm, -1, dim)
        npatches = feat_q.size(1)
        l_neg_curbatch = torch.bmm(feat_q, feat_k.transpose(2, 1))

        # diagonal entries are similarity between same features, and hence meaningless.
        # just fill the diagonal with very small number, which is exp(-10) and almost zero
        diagonal = torch.eye(npatches, device=feat_q.device, dtype=self.mask_dtype)[None, :, :]
        l_neg_curbatch.masked_fill_(diagonal, -10.0)
        l_neg = l_neg_curbatch.view(-1, npatches)

        out = torch.cat((l_pos, l_neg), dim=1) / self.opt.nce_T
        loss = self.cross_entropy_loss(out, torch.zeros(out.size(0), dtype=torch.long, device=feat_q.device))
        return loss


class PatchSampleF(nn.Module):
    def __init__(self, in_dim=8, nc=16):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, nc), nn.ReLU(), nn.Linear(nc, nc))

    def forward(self, feats, num_patches=5, patch_ids=None):
        return_ids = []
        return_feats = []
        for feat_id, feat in enumerate(feats):
            B, H, W = feat.shape[0], feat.shape[2], feat.shape[3]
            feat_reshape = feat.permute(0, 2, 3, 1).flatten(1, 2)
            if patch_ids is not None:
                patch_id = patch_ids[feat_id]
            else:
                patch_id = torch.randperm(feat_reshape.shape[1])[:num_patches]
            x_sample = feat_reshape[:, patch_id, :].flatten(0, 1)
            x_sample = self.mlp(x_sample)
            x_sample = x_sample / (x_sample.norm(p=2, dim=1, keepdim=True) + 1e-7)
            return_ids.append(patch_id)
            return_feats.append(x_sample)
        return return_feats, return_ids


opt = Opt()
netG_enc = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
netF = PatchSampleF()
criterionNCE = [PatchNCELoss(opt)]
real_A = torch.randn(2, 3, 6, 6)
fake_B = torch.tanh(real_A + 0.1 * torch.randn(2, 3, 6, 6))
feat_q = [netG_enc(fake_B)]
feat_k = [netG_enc(real_A)]
feat_k_pool, sample_ids = netF(feat_k, 5, None)
feat_q_pool, _ = netF(feat_q, 5, sample_ids)
total_nce_loss = 0.0
for f_q, f_k, crit in zip(feat_q_pool, feat_k_pool, criterionNCE):
    loss = crit(f_q, f_k) * 1.0
    total_nce_loss += loss.mean()
total_nce_loss.backward()
