# label: hazard raises
# why: WikiTablesDecoderStep.take_step projects the query with `relu(...)`, passes it through `_dropout` (the identity lambda when dropout is 0) and then adds the unlinked-agenda bias with `predicted_action_embedding += multiplier * embedding_addition`; the write lands in the ReLU output ReluBackward saved, so the coverage (ERM) loss backward raises. The entity-logit bias a few lines later is already out of place.
# source: https://github.com/allenai/allennlp/commit/ada48af502fc057235be37c9d16252f10469d260
from typing import Dict, List, Tuple

import torch
from torch.nn import Parameter
from torch.nn.modules.linear import Linear
from torch.nn.modules.rnn import LSTMCell

torch.manual_seed(0)


def masked_log_softmax(vector, mask):
    if mask is not None:
        vector = vector + (mask + 1e-45).log()
    return torch.nn.functional.log_softmax(vector, dim=-1)


def get_mask_from_sequence_lengths(sequence_lengths, max_length):
    ones = sequence_lengths.new_ones(sequence_lengths.size(0), max_length)
    range_tensor = ones.cumsum(dim=1)
    return (sequence_lengths.unsqueeze(1) >= range_tensor).long()


class ChecklistState:
    def __init__(self, terminal_actions, checklist_target, checklist_mask, checklist) -> None:
        self.terminal_actions = terminal_actions
        self.checklist_target = checklist_target
        self.checklist_mask = checklist_mask
        self.checklist = checklist
        self.terminal_indices_dict: Dict[int, int] = {}
        for checklist_index, batch_action_index in enumerate(terminal_actions):
            action_index = int(batch_action_index[0])
            if action_index == -1:
                continue
            self.terminal_indices_dict[action_index] = checklist_index

    def update(self, action) -> 'ChecklistState':
        checklist_addition = (self.terminal_actions == action).float()
        new_checklist = self.checklist + checklist_addition
        return ChecklistState(self.terminal_actions, self.checklist_target, self.checklist_mask, new_checklist)

    def get_balance(self) -> torch.Tensor:
        return self.checklist_mask * (self.checklist_target - self.checklist)


class WikiTablesDecoderState:
    def __init__(self, batch_indices, score, hidden_state, memory_cell, previous_action_embedding,
                 attended_question, encoder_outputs, action_embeddings, flattened_linking_scores,
                 num_embedded_actions, linked_actions, checklist_state) -> None:
        self.batch_indices = batch_indices
        self.score = score
        self.hidden_state = hidden_state
        self.memory_cell = memory_cell
        self.previous_action_embedding = previous_action_embedding
        self.attended_question = attended_question
        self.encoder_outputs = encoder_outputs
        self.action_embeddings = action_embeddings
        self.flattened_linking_scores = flattened_linking_scores
        self.num_embedded_actions = num_embedded_actions
        self.linked_actions = linked_actions
        self.checklist_state = checklist_state
        self.global_to_batch_action_indices = {(b, a): a for b in batch_indices
                                               for a in range(num_embedded_actions + len(linked_actions))}


class WikiTablesDecoderStep(torch.nn.Module):
    def __init__(self, encoder_output_dim: int, action_embedding_dim: int, num_entity_types: int,
                 unlinked_terminal_indices: List[int], dropout: float = 0.0) -> None:
        super().__init__()
        output_dim = encoder_output_dim
        input_dim = output_dim
        self._input_projection_layer = Linear(output_dim + action_embedding_dim, input_dim)
        self._output_projection_layer = Linear(output_dim + encoder_output_dim, action_embedding_dim)
        self._decoder_cell = LSTMCell(input_dim, output_dim)
        self._entity_type_embedding = torch.nn.Embedding(num_entity_types, action_embedding_dim)
        self._unlinked_terminal_indices = unlinked_terminal_indices
        self._unlinked_checklist_multiplier = Parameter(torch.FloatTensor([1.0]))
        self._linked_checklist_multiplier = Parameter(torch.FloatTensor([1.0]))
        if dropout > 0:
            self._dropout = torch.nn.Dropout(p=dropout)
        else:
            self._dropout = lambda x: x

    def take_step(self, state: WikiTablesDecoderState):
        decoder_input = self._input_projection_layer(torch.cat([state.attended_question,
                                                                state.previous_action_embedding], -1))
        decoder_input = torch.tanh(decoder_input)
        hidden_state, memory_cell = self._decoder_cell(decoder_input, (state.hidden_state, state.memory_cell))
        hidden_state = self._dropout(hidden_state)
        attended_question, attention_weights = self.attend_on_question(hidden_state, state.encoder_outputs)
        action_query = torch.cat([hidden_state, attended_question], dim=-1)

        actions_to_embed = [list(range(state.num_embedded_actions)) for _ in state.batch_indices]
        actions_to_link = [list(state.linked_actions) for _ in state.batch_indices]
        action_embeddings, embedded_action_mask = self._get_action_embeddings(state, actions_to_embed)

        projected_query = torch.nn.functional.relu(self._output_projection_layer(action_query))
        predicted_action_embedding = self._dropout(projected_query)
        linked_balance = None
        if state.checklist_state[0] is not None:
            linked_balance, unlinked_balance = self._get_checklist_balance(state,
                                                                           self._unlinked_terminal_indices,
                                                                           actions_to_link)
            embedding_addition = self._get_predicted_embedding_addition(state,
                                                                        self._unlinked_terminal_indices,
                                                                        unlinked_balance)
            predicted_action_embedding += self._unlinked_checklist_multiplier * embedding_addition  # <-- IPL001

        embedded_action_logits = action_embeddings.bmm(predicted_action_embedding.unsqueeze(-1)).squeeze(-1)
        entity_action_logits, entity_action_mask = self._get_entity_action_logits(state, actions_to_link,
                                                                                  attention_weights,
                                                                                  linked_balance)
        action_logits = torch.cat([embedded_action_logits, entity_action_logits], dim=-1)
        action_mask = torch.cat([embedded_action_mask, entity_action_mask], dim=-1).float()
        log_probs = masked_log_softmax(action_logits, action_mask)
        return log_probs, hidden_state, memory_cell, attended_question, action_embeddings

    @staticmethod
    def _get_checklist_balance(state, unlinked_terminal_indices, actions_to_link):
        checklist_balances = []
        for instance_checklist_state in state.checklist_state:
            checklist_balance = torch.clamp(instance_checklist_state.get_balance(), min=0.0)
            checklist_balances.append(checklist_balance)
        checklist_balance = torch.stack([x for x in checklist_balances])
        checklist_balance = checklist_balance.squeeze(2)  # (group_size, num_terminals)
        mapped_actions_to_link = []
        mapped_actions_to_embed = []
        batch_actions_to_checklist = [checklist_state.terminal_indices_dict
                                      for checklist_state in state.checklist_state]
        for group_index, batch_index in enumerate(state.batch_indices):
            instance_mapped_embedded_actions = []
            for action in unlinked_terminal_indices:
                batch_action_index = state.global_to_batch_action_indices[(batch_index, action)]
                if batch_action_index in batch_actions_to_checklist[group_index]:
                    checklist_index = batch_actions_to_checklist[group_index][batch_action_index]
                else:
                    checklist_index = -1
                instance_mapped_embedded_actions.append(checklist_index)
            mapped_actions_to_embed.append(instance_mapped_embedded_actions)
        unlinked_action_indices = torch.tensor(mapped_actions_to_embed).long()
        unlinked_actions_mask = (unlinked_action_indices != -1).long()
        unlinked_action_indices = unlinked_action_indices * unlinked_actions_mask
        unlinked_checklist_balance = torch.gather(checklist_balance, 1, unlinked_action_indices)
        unlinked_checklist_balance = unlinked_checklist_balance * unlinked_actions_mask.float()
        linked_checklist_balance = None
        if actions_to_link:
            for group_index, instance_actions_to_link in enumerate(actions_to_link):
                mapped_actions_to_link.append([batch_actions_to_checklist[group_index][action]
                                               for action in instance_actions_to_link])
            linked_action_indices = torch.tensor(mapped_actions_to_link).long()
            linked_actions_mask = (linked_action_indices != -1).long()
            linked_action_indices = linked_action_indices * linked_actions_mask
            linked_checklist_balance = torch.gather(checklist_balance, 1, linked_action_indices)
            linked_checklist_balance = linked_checklist_balance * linked_actions_mask.float()
        return linked_checklist_balance, unlinked_checklist_balance

    @staticmethod
    def _get_predicted_embedding_addition(state, unlinked_terminal_indices, unlinked_checklist_balance):
        unlinked_balance = unlinked_checklist_balance.unsqueeze(2)
        group_size = len(state.batch_indices)
        action_embedding_dim = state.action_embeddings.size(-1)
        num_terminals = len(unlinked_terminal_indices)
        group_terminal_indices = [unlinked_terminal_indices for _ in range(group_size)]
        terminal_indices_tensor = torch.tensor(group_terminal_indices).long()
        flattened_terminal_indices = terminal_indices_tensor.view(-1)
        flattened_action_embeddings = state.action_embeddings.index_select(0, flattened_terminal_indices)
        terminal_embeddings = flattened_action_embeddings.view(group_size, num_terminals, action_embedding_dim)
        checklist_balance_embeddings = terminal_embeddings * unlinked_balance
        return checklist_balance_embeddings.sum(1)

    def attend_on_question(self, query, encoder_outputs):
        question_attention_weights = torch.softmax(encoder_outputs.bmm(query.unsqueeze(-1)).squeeze(-1), dim=-1)
        attended_question = question_attention_weights.unsqueeze(1).bmm(encoder_outputs).squeeze(1)
        return attended_question, question_attention_weights

    @staticmethod
    def _get_action_embeddings(state, actions_to_embed):
        num_actions = [len(action_list) for action_list in actions_to_embed]
        max_num_actions = max(num_actions)
        action_tensor = torch.tensor(actions_to_embed).long()
        group_size = len(state.batch_indices)
        action_embedding_dim = state.action_embeddings.size(-1)
        flattened_action_embeddings = state.action_embeddings.index_select(0, action_tensor.view(-1))
        action_embeddings = flattened_action_embeddings.view(group_size, max_num_actions, action_embedding_dim)
        action_mask = get_mask_from_sequence_lengths(torch.tensor(num_actions), max_num_actions)
        return action_embeddings, action_mask

    def _get_entity_action_logits(self, state, actions_to_link, attention_weights, linked_checklist_balance=None):
        group_size = len(state.batch_indices)
        num_question_tokens = state.flattened_linking_scores.size(-1)
        entity_indices = torch.tensor([[a - state.num_embedded_actions for a in actions]
                                       for actions in actions_to_link]).long()
        max_num_actions = entity_indices.size(1)
        flattened_action_linking = state.flattened_linking_scores.index_select(0, entity_indices.view(-1))
        action_linking = flattened_action_linking.view(group_size, max_num_actions, num_question_tokens)
        action_logits = action_linking.bmm(attention_weights.unsqueeze(-1)).squeeze(-1)
        if linked_checklist_balance is not None:
            action_logits_addition = action_logits * linked_checklist_balance
            action_logits = action_logits + self._linked_checklist_multiplier * action_logits_addition
        action_mask = get_mask_from_sequence_lengths(torch.tensor([max_num_actions] * group_size), max_num_actions)
        return action_logits, action_mask


class WikiTablesErmSemanticParser(torch.nn.Module):
    def __init__(self, vocab_size=30, embed_dim=8, action_embedding_dim=6, num_embedded_actions=8, num_entities=3):
        super().__init__()
        self._question_embedder = torch.nn.Embedding(vocab_size, embed_dim)
        self._encoder = torch.nn.LSTM(embed_dim, embed_dim, batch_first=True)
        self._action_embedder = torch.nn.Embedding(num_embedded_actions, action_embedding_dim)
        self._entity_embedder = torch.nn.Embedding(vocab_size, embed_dim)
        self._num_embedded_actions = num_embedded_actions
        self._num_entities = num_entities
        unlinked_terminal_indices = [5, 6, 7]
        self._decoder_step = WikiTablesDecoderStep(embed_dim, action_embedding_dim, num_entity_types=2,
                                                   unlinked_terminal_indices=unlinked_terminal_indices, dropout=0.0)
        self._action_embedding_dim = action_embedding_dim

    def forward(self, question, table_entities, agenda, num_steps=2):
        batch_size = question.size(0)
        encoder_outputs, (final_h, final_c) = self._encoder(self._question_embedder(question))
        entity_embeddings = self._entity_embedder(table_entities)        # (num_entities, embed_dim)
        linking_scores = entity_embeddings.matmul(encoder_outputs.transpose(1, 2))  # (batch, num_entities, q_len)
        flattened_linking_scores = linking_scores.view(batch_size * self._num_entities, -1)
        linked_actions = list(range(self._num_embedded_actions, self._num_embedded_actions + self._num_entities))
        terminal_actions = torch.tensor([5, 6, 7] + linked_actions).unsqueeze(-1)
        checklist_states = []
        for b in range(batch_size):
            target = (terminal_actions == agenda[b].unsqueeze(0)).any(-1, keepdim=True).float()
            checklist_states.append(ChecklistState(terminal_actions, target, torch.ones_like(target),
                                                   torch.zeros_like(target)))
        state = WikiTablesDecoderState(list(range(batch_size)), torch.zeros(batch_size), final_h[0], final_c[0],
                                       torch.zeros(batch_size, self._action_embedding_dim), encoder_outputs.mean(1),
                                       encoder_outputs, self._action_embedder.weight, flattened_linking_scores[:self._num_entities].repeat(1, 1),
                                       self._num_embedded_actions, linked_actions, checklist_states)
        for _ in range(num_steps):
            log_probs, hidden_state, memory_cell, attended_question, action_embeddings = self._decoder_step.take_step(state)
            best_log_probs, best_actions = log_probs.max(dim=-1)
            new_checklists = [c.update(int(a)) for c, a in zip(state.checklist_state, best_actions)]
            previous = torch.stack([action_embeddings[g, min(int(a), self._num_embedded_actions - 1)]
                                    for g, a in enumerate(best_actions)])
            state = WikiTablesDecoderState(state.batch_indices, state.score + best_log_probs, hidden_state, memory_cell,
                                           previous, attended_question, encoder_outputs, state.action_embeddings,
                                           state.flattened_linking_scores, self._num_embedded_actions,
                                           linked_actions, new_checklists)
        checklist_cost = torch.stack([(c.get_balance() ** 2).sum() for c in state.checklist_state])
        loss = -state.score.mean() + 0.1 * checklist_cost.mean()
        return {"loss": loss}


parser = WikiTablesErmSemanticParser()
optimizer = torch.optim.SGD(parser.parameters(), lr=0.1)
question = torch.randint(0, 30, (2, 6))
table_entities = torch.tensor([3, 11, 17])
agenda = torch.tensor([[5, 9], [7, 8]])
output_dict = parser(question, table_entities, agenda)
optimizer.zero_grad()
output_dict["loss"].backward()
optimizer.step()
loss = output_dict["loss"].detach()
