# label: safe
# why: before the temperature refactor, the AlphaStar action-argument heads scaled logits in place (`x.div_(temperature)` on the fc3 output, `query_result.div_(temperature)` / `query_result.sub_((1 - mask) * 1e12)` on a fresh mean), and SelectedUnitsHead marks picks in its own `units` / concatenated `mask` buffers; none of these tensors is saved by a backward node, so the supervised loss trains correctly.
# source: https://github.com/opendilab/DI-engine/commit/f77408660ce101f68ddfbdb6ff1df5acfdcd8f20
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Cfg(dict):
    __getattr__ = dict.__getitem__


def build_activation(name):
    return {'relu': nn.ReLU(), 'tanh': nn.Tanh()}[name]


def fc_block(in_channels, out_channels, activation=None, norm_type=None):
    layers = [nn.Linear(in_channels, out_channels)]
    if activation is not None:
        layers.append(activation)
    return nn.Sequential(*layers)


def one_hot(val, num):
    return F.one_hot(val, num).float()


class CategoricalPdPytorch(torch.distributions.Categorical):
    def __init__(self, logits=None):
        super().__init__(logits=logits)

    def sample(self):
        with torch.no_grad():
            return super().sample()


class QueuedHead(nn.Module):
    def __init__(self, cfg):
        super(QueuedHead, self).__init__()
        self.act = build_activation(cfg.activation)
        self.fc1 = fc_block(cfg.input_dim, cfg.decode_dim, activation=self.act, norm_type=None)
        self.fc2 = fc_block(cfg.decode_dim, cfg.decode_dim, activation=self.act, norm_type=None)
        self.fc3 = fc_block(cfg.decode_dim, cfg.queued_dim, activation=None, norm_type=None)
        self.embed_fc1 = fc_block(cfg.queued_dim, cfg.queued_map_dim, activation=self.act, norm_type=None)
        self.embed_fc2 = fc_block(cfg.queued_map_dim, cfg.input_dim, activation=self.act, norm_type=None)
        self.pd = CategoricalPdPytorch
        self.queued_dim = cfg.queued_dim

    def forward(self, embedding, temperature=1.0):
        x = self.fc1(embedding)
        x = self.fc2(x)
        x = self.fc3(x)
        x.div_(temperature)
        handle = self.pd(x)
        queued = handle.sample()

        queued_one_hot = one_hot(queued, self.queued_dim)
        embedding_queued = self.embed_fc1(queued_one_hot)
        embedding_queued = self.embed_fc2(embedding_queued)

        return x, queued, embedding + embedding_queued


class SelectedUnitsHead(nn.Module):
    def __init__(self, cfg):
        super(SelectedUnitsHead, self).__init__()
        self.act = build_activation(cfg.activation)
        self.key_fc = fc_block(cfg.entity_embedding_dim, cfg.key_dim, activation=None, norm_type=None)
        self.func_fc = fc_block(cfg.unit_type_dim, cfg.func_dim, activation=self.act, norm_type=None)
        self.fc1 = fc_block(cfg.input_dim, cfg.func_dim, activation=self.act, norm_type=None)
        self.fc2 = fc_block(cfg.func_dim, cfg.key_dim, activation=self.act, norm_type=None)
        self.embed_fc = fc_block(cfg.key_dim, cfg.input_dim, activation=None, norm_type=None)
        self.lstm = nn.LSTM(cfg.key_dim, cfg.hidden_dim, cfg.num_layers)
        self.max_entity_num = cfg.max_entity_num
        self.key_dim = cfg.key_dim
        self.pd = CategoricalPdPytorch

    def _get_key(self, entity_embedding):
        B, N = entity_embedding.shape[:2]
        key = self.key_fc(entity_embedding)
        end_flag = torch.zeros(B, 1, self.key_dim, device=key.device)
        key = torch.cat([key, end_flag], dim=1)
        end_flag_index = N
        return key, end_flag_index

    def _get_init_query(self, embedding, available_unit_type_mask):
        func_embed = self.func_fc(available_unit_type_mask)
        x = self.fc1(embedding)
        x = self.fc2(x + func_embed)
        state = None
        return x, state

    def _query(self, key, end_flag_index, x, state, mask, temperature, query_num):
        B, N = key.shape[:2]
        units = torch.zeros(B, N, device=key.device, dtype=torch.int)
        logits = [[] for _ in range(B)]
        end_flag_trigger = [False for _ in range(B)]
        x = x.unsqueeze(0)
        for i in range(self.max_entity_num):
            if sum(end_flag_trigger) == B:
                break
            x, state = self.lstm(x, state)
            query_result = x.permute(1, 0, 2) * key
            query_result = query_result.mean(dim=2)
            query_result.div_(temperature)
            query_result.sub_((1 - mask) * 1e12)
            handle = self.pd(query_result)
            entity_num = handle.sample()

            for b in range(B):
                if end_flag_trigger[b]:
                    continue
                else:
                    logits[b].append(query_result[b])
                    if entity_num[b] == end_flag_index:
                        end_flag_trigger[b] = True
                        continue
                    units[b][entity_num[b]] = 1
                    mask[b][entity_num[b]] = 0
        embedding_selected = units.unsqueeze(2).to(key.dtype)
        embedding_selected = embedding_selected * key
        embedding_selected = embedding_selected.mean(dim=1)
        embedding_selected = self.embed_fc(embedding_selected)
        return logits, units, embedding_selected

    def forward(self, embedding, available_unit_type_mask, available_units_mask, entity_embedding, temperature=1.0):
        input, state = self._get_init_query(embedding, available_unit_type_mask)
        key, end_flag_index = self._get_key(entity_embedding)
        mask = torch.cat([available_units_mask, torch.ones_like(available_units_mask[:, 0:1])], dim=1)
        logits, units, embedding_selected = self._query(key, end_flag_index, input, state, mask, temperature, None)
        return logits, units, embedding + embedding_selected


cfg = Cfg(activation='relu', input_dim=16, decode_dim=12, queued_dim=2, queued_map_dim=8,
          entity_embedding_dim=10, key_dim=6, unit_type_dim=5, func_dim=8, hidden_dim=6, num_layers=1,
          max_entity_num=3)
queued_head = QueuedHead(cfg)
selected_units_head = SelectedUnitsHead(cfg)
params = list(queued_head.parameters()) + list(selected_units_head.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)

B, N = 3, 5
embedding = torch.randn(B, cfg.input_dim)
available_unit_type_mask = torch.randint(0, 2, (B, cfg.unit_type_dim)).float()
available_units_mask = torch.ones(B, N)
entity_embedding = torch.randn(B, N, cfg.entity_embedding_dim)
target_queued = torch.tensor([0, 1, 1])
target_unit = torch.tensor([2, 0, 4])

queued_logits, queued, embedding = queued_head(embedding, temperature=0.8)
unit_logits, units, embedding = selected_units_head(embedding, available_unit_type_mask, available_units_mask,
                                                    entity_embedding, temperature=0.8)
first_step_logits = torch.stack([l[0] for l in unit_logits])
loss = F.cross_entropy(queued_logits, target_queued) + F.cross_entropy(first_step_logits, target_unit)
optimizer.zero_grad()
loss.backward()
optimizer.step()
