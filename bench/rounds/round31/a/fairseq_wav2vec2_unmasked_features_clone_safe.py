# label: safe
# why: the fix stores `unmasked_features = features.clone()`, so apply_mask's in-place `x[mask_indices] = self.mask_emb` (and the in-place logit scaling/-inf fill in compute_preds) only touch tensors nobody else reads or autograd saved; the contrastive targets stay unmasked in train and eval mode.
# source: https://github.com/facebookresearch/fairseq/commit/54baa2e72d1228ca7d40b78f676ed782285ae6c7
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def compute_mask_indices(shape, mask_prob, mask_length, min_masks, generator):
    bsz, all_sz = shape
    mask = torch.zeros(shape, dtype=torch.bool)
    num_mask = max(min_masks, int(mask_prob * all_sz / float(mask_length)))
    for i in range(bsz):
        starts = torch.randperm(all_sz - mask_length, generator=generator)[:num_mask]
        for s in starts.tolist():
            mask[i, s : s + mask_length] = True
    return mask


class ConvFeatureExtractionModel(nn.Module):
    def __init__(self, conv_layers, dropout=0.0):
        super().__init__()
        self.conv_layers = nn.ModuleList()
        in_d = 1
        for dim, k, stride in conv_layers:
            self.conv_layers.append(nn.Sequential(nn.Conv1d(in_d, dim, k, stride=stride, bias=False), nn.Dropout(dropout), nn.GELU()))
            in_d = dim

    def forward(self, x):
        x = x.unsqueeze(1)  # BxT -> BxCxT
        for conv in self.conv_layers:
            x = conv(x)
        return x


class TransformerEncoder(nn.Module):
    def __init__(self, embed_dim, heads=2):
        super().__init__()
        self.pos_conv = nn.Conv1d(embed_dim, embed_dim, kernel_size=3, padding=1, groups=2)
        self.layer_norm = nn.LayerNorm(embed_dim)
        self.self_attn = nn.MultiheadAttention(embed_dim, heads, batch_first=True)
        self.fc1 = nn.Linear(embed_dim, 2 * embed_dim)
        self.fc2 = nn.Linear(2 * embed_dim, embed_dim)
        self.final_layer_norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x_conv = F.gelu(self.pos_conv(x.transpose(1, 2))).transpose(1, 2)
        x = x + x_conv
        x = self.layer_norm(x)
        residual = x
        x, _ = self.self_attn(x, x, x, need_weights=False)
        x = self.final_layer_norm(residual + x)
        x = x + self.fc2(F.gelu(self.fc1(x)))
        return x


class Wav2Vec2Model(nn.Module):
    def __init__(self, embed=16, encoder_embed_dim=16, final_dim=8, mask_prob=0.3, mask_length=2, n_negatives=4, logit_temp=0.1):
        super().__init__()
        self.feature_extractor = ConvFeatureExtractionModel([(embed, 10, 5), (embed, 3, 2)])
        self.embed = embed
        self.post_extract_proj = nn.Linear(embed, encoder_embed_dim) if embed != encoder_embed_dim else None
        self.mask_prob = mask_prob
        self.mask_length = mask_length
        self.n_negatives = n_negatives
        self.logit_temp = logit_temp
        self.dropout_input = nn.Dropout(0.1)
        self.dropout_features = nn.Dropout(0.1)
        self.mask_emb = nn.Parameter(torch.FloatTensor(encoder_embed_dim).uniform_())
        self.encoder = TransformerEncoder(encoder_embed_dim)
        self.layer_norm = nn.LayerNorm(embed)
        self.final_proj = nn.Linear(encoder_embed_dim, final_dim)
        self.project_q = nn.Linear(embed, final_dim)
        self.mask_generator = torch.Generator().manual_seed(1)

    def apply_mask(self, x, padding_mask):
        B, T, C = x.shape
        if self.mask_prob > 0:
            mask_indices = compute_mask_indices((B, T), self.mask_prob, self.mask_length, 2, self.mask_generator)
            x[mask_indices] = self.mask_emb
        else:
            mask_indices = None
        return x, mask_indices

    def sample_negatives(self, y, num):
        bsz, tsz, fsz = y.shape
        y = y.view(-1, fsz)  # BTC => (BxT)C
        high = tsz
        with torch.no_grad():
            tszs = torch.arange(num).unsqueeze(-1).expand(-1, self.n_negatives).flatten()
            neg_idxs = torch.randint(low=0, high=high - 1, size=(bsz, self.n_negatives * num), generator=self.mask_generator)
            neg_idxs[neg_idxs >= tszs] += 1
            for i in range(1, bsz):
                neg_idxs[i] += i * high
        negs = y[neg_idxs.view(-1)]
        negs = negs.view(bsz, num, self.n_negatives, fsz).permute(2, 0, 1, 3)  # to NxBxTxC
        return negs, neg_idxs

    def compute_preds(self, x, y, negatives):
        neg_is_pos = (y == negatives).all(-1)
        y = y.unsqueeze(0)
        targets = torch.cat([y, negatives], dim=0)
        logits = torch.cosine_similarity(x.float(), targets.float(), dim=-1).type_as(x)
        logits /= self.logit_temp
        if neg_is_pos.any():
            logits[1:][neg_is_pos] = float("-inf")
        return logits

    def forward(self, source, padding_mask=None, mask=True):
        features = self.feature_extractor(source)
        features_pen = features.float().pow(2).mean()

        features = features.transpose(1, 2)
        features = self.layer_norm(features)
        unmasked_features = features.clone()

        if self.post_extract_proj is not None:
            features = self.post_extract_proj(features)

        features = self.dropout_input(features)
        unmasked_features = self.dropout_features(unmasked_features)

        x, mask_indices = self.apply_mask(features, padding_mask)
        y = unmasked_features[mask_indices].view(unmasked_features.size(0), -1, unmasked_features.size(-1))

        x = self.encoder(x)

        y = self.project_q(y)
        negs, _ = self.sample_negatives(y, y.size(1))

        x = x[mask_indices].view(x.size(0), -1, x.size(-1))
        x = self.final_proj(x)
        x = self.compute_preds(x, y, negs)
        return {"x": x, "features_pen": features_pen}


def wav2vec_criterion(net_output):
    logits = net_output["x"].transpose(0, 2).reshape(-1, net_output["x"].size(0))
    target = logits.new_zeros(logits.size(0), dtype=torch.long)
    loss = F.cross_entropy(logits, target, reduction="sum")
    return loss + 10.0 * net_output["features_pen"]


def main():
    model = Wav2Vec2Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    source = torch.randn(2, 160)

    model.train()
    train_loss = wav2vec_criterion(model(source))
    optimizer.zero_grad()
    train_loss.backward()
    grad_norm = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]).norm()
    optimizer.step()

    model.eval()  # validation: dropout returns its input unchanged
    with torch.no_grad():
        valid_output = model(source)
        valid_loss = wav2vec_criterion(valid_output)
    return train_loss.detach(), grad_norm, valid_output["x"][0], valid_loss


train_loss, grad_norm, valid_logits, valid_loss = main()
