-- The commands that the keys of the plugin's buffers run, and that a race
-- run here ends with: diff, merge, log, cancel and scores (each takes a
-- target: { root, race, agent }) and show_scores(race, model).
--
-- They live in lua/hydra/actions/, which requires the views (race.lua,
-- collab.lua, scoreboard.lua); a view requiring them back would make a
-- cycle. So init.lua fills this table once, and the views look a command
-- up here when a key is pressed.

return {}
