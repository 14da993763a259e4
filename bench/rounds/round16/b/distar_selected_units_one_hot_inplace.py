# label: hazard raises
# why: during training the selected-units head multiplies key_embeddings by the running one-hot mask (mul saves the mask) and then marks the next selected unit in that same tensor in place; DI-star clones it first ("inplace operation can not backward")
# source: https://github.com/opendilab/DI-star (file distar/agent/default/model/head/action_arg_head.py @ d40e09a30e546ca4111d33460edb0fad87d71b39, SelectedUnitsHead._query)
import torch
import torch.nn as nn

torch.manual_seed(0)


def sequence_mask(lengths, max_len=None):
    if max_len is None:
        max_len = int(lengths.max())
    return torch.arange(max_len).unsqueeze(0) < lengths.unsqueeze(1)


class SelectedUnitsHead(nn.Module):
    def __init__(self, entity_dim=6, input_dim=8, key_dim=8):
        super().__init__()
        self.key_fc = nn.Linear(entity_dim, key_dim)
        self.query_fc1 = nn.Linear(input_dim, key_dim)
        self.query_fc2 = nn.Linear(key_dim, 32)
        self.embed_fc1 = nn.Linear(key_dim, key_dim)
        self.embed_fc2 = nn.Linear(key_dim, input_dim)
        self.lstm = nn.LSTMCell(32, 32)
        self.key_proj = nn.Linear(key_dim, 32)
        self.end_embedding = nn.Parameter(torch.randn(1, entity_dim) * 0.1)

    def _get_key_mask(self, entity_embedding, entity_num):
        bs = entity_embedding.shape[0]
        padding_end = torch.zeros(bs, 1, entity_embedding.shape[2])
        entity_embedding = torch.cat([entity_embedding, padding_end], dim=1)
        entity_embedding[torch.arange(bs), entity_num] = self.end_embedding
        key = self.key_fc(entity_embedding)
        mask = sequence_mask(entity_num + 1, max_len=entity_embedding.shape[1])
        return key, mask, key

    def _query(self, key, entity_num, autoregressive_embedding, logits_mask, key_embeddings,
               selected_units_num, selected_units):
        ae = autoregressive_embedding
        bs = ae.shape[0]
        end_flag = torch.zeros(bs, dtype=torch.bool)
        state = (torch.zeros(bs, 32), torch.zeros(bs, 32))
        seq_len = int(selected_units_num.max())
        queries = []
        logits_mask = logits_mask.repeat(max(seq_len, 1), 1, 1)
        logits_mask[0, torch.arange(bs), entity_num] = 0
        selected_units_one_hot = torch.zeros(*key_embeddings.shape[:2]).unsqueeze(dim=2)
        for i in range(max(seq_len, 1)):
            if i > 0:
                logits_mask[i] = logits_mask[i - 1]
                if i == 1:
                    logits_mask[i, torch.arange(bs), entity_num] = 1
                logits_mask[i, torch.arange(bs), selected_units[:, i - 1]] = 0
            lstm_input = self.query_fc2(self.query_fc1(ae))
            state = self.lstm(lstm_input, state)
            queries.append(state[0].unsqueeze(0))
            end_flag[selected_units[:, i] == entity_num] = 1
            selected_units_one_hot[torch.arange(bs)[~end_flag], selected_units[:, i][~end_flag], :] = 1  # <-- IPL001: mask was saved by key_embeddings * mask at the previous step
            selected_units_emebedding = (key_embeddings * selected_units_one_hot).sum(dim=1)
            num = selected_units_one_hot.sum(dim=1)
            selected_units_emebedding = selected_units_emebedding / num.clamp(min=1)
            selected_units_emebedding = self.embed_fc2(self.embed_fc1(selected_units_emebedding))
            ae = autoregressive_embedding + selected_units_emebedding

        queries = torch.cat(queries, dim=0).unsqueeze(dim=2)
        key = self.key_proj(key).unsqueeze(dim=0)
        logits = (queries * key).sum(dim=3)
        logits = logits.masked_fill(~logits_mask, -1e9)
        return logits.permute(1, 0, 2).contiguous(), ae

    def forward(self, embedding, entity_embedding, entity_num, selected_units_num, selected_units):
        key, mask, key_embeddings = self._get_key_mask(entity_embedding, entity_num)
        return self._query(key, entity_num, embedding, mask, key_embeddings, selected_units_num, selected_units)


head = SelectedUnitsHead()
embedding = torch.randn(2, 8)
entity_embedding = torch.randn(2, 5, 6)
entity_num = torch.tensor([5, 4])
selected_units = torch.tensor([[1, 3, 5], [0, 4, 4]])
selected_units_num = torch.tensor([3, 2])
logits, ae = head(embedding, entity_embedding, entity_num, selected_units_num, selected_units)
target = selected_units
loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1)) + ae.pow(2).mean()
loss.backward()
