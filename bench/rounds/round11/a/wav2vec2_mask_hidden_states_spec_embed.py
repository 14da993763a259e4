# label: safe
# why: SpecAugment-style masking writes masked_spec_embed / zeros into hidden_states in place, but those hidden states come out of dropout/linear layers whose backward does not need their output.
# source: https://github.com/huggingface/transformers/blob/main/src/transformers/models/wav2vec2/modeling_wav2vec2.py
import torch
from torch import nn

torch.manual_seed(0)


class Wav2Vec2FeatureProjection(nn.Module):
    def __init__(self, conv_dim, hidden_size, dropout):
        super().__init__()
        self.layer_norm = nn.LayerNorm(conv_dim)
        self.projection = nn.Linear(conv_dim, hidden_size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden_states):
        norm_hidden_states = self.layer_norm(hidden_states)
        hidden_states = self.projection(norm_hidden_states)
        hidden_states = self.dropout(hidden_states)
        return hidden_states, norm_hidden_states


class Wav2Vec2Model(nn.Module):
    def __init__(self, conv_dim=6, hidden_size=8):
        super().__init__()
        self.feature_extractor = nn.Conv1d(1, conv_dim, kernel_size=4, stride=2)
        self.feature_projection = Wav2Vec2FeatureProjection(conv_dim, hidden_size, 0.1)
        self.masked_spec_embed = nn.Parameter(torch.empty(hidden_size).uniform_())
        self.encoder = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.GELU(), nn.Linear(hidden_size, hidden_size))

    def _mask_hidden_states(self, hidden_states, mask_time_indices=None, mask_feature_indices=None):
        if mask_time_indices is not None:
            # apply SpecAugment along time axis with given mask_time_indices
            hidden_states[mask_time_indices] = self.masked_spec_embed.to(hidden_states.dtype)
        if mask_feature_indices is not None:
            mask_feature_indices = mask_feature_indices[:, None].expand(-1, hidden_states.size(1), -1)
            hidden_states[mask_feature_indices] = 0
        return hidden_states

    def forward(self, input_values, mask_time_indices=None, mask_feature_indices=None):
        extract_features = self.feature_extractor(input_values[:, None])
        extract_features = extract_features.transpose(1, 2)
        hidden_states, extract_features = self.feature_projection(extract_features)
        hidden_states = self._mask_hidden_states(hidden_states, mask_time_indices, mask_feature_indices)
        return self.encoder(hidden_states), extract_features


model = Wav2Vec2Model()
model.train()
input_values = torch.randn(2, 30)
mask_time_indices = torch.zeros(2, 14, dtype=torch.bool)
mask_time_indices[0, 2:5] = True
mask_time_indices[1, 7:10] = True
mask_feature_indices = torch.zeros(2, 8, dtype=torch.bool)
mask_feature_indices[:, 1] = True
last_hidden_state, extract_features = model(input_values, mask_time_indices, mask_feature_indices)
loss = last_hidden_state.pow(2).mean()
loss.backward()
